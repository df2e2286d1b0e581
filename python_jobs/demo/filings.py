"""The synthetic 10-K and 10-Q: their sections, prose and statements drawn into a PDF (pdf_drawing.py), read
back as FinanceBench reads a filing (each page's extracted text), with every anchor checked on its page."""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field

from pypdf import PdfReader

from python_jobs.demo.financials import D_FY, D_PFY, D_Q, FY, Q_CUR, Q_PRIOR, CompanyProfile, Financials, fmt, money
from python_jobs.demo.pdf_drawing import Anchor, FilingPDF, balance_rows, cash_flow_rows, income_rows

RISKS = (
    ("Macroeconomic conditions", "A slowdown in economic activity, higher interest rates or inflation could reduce "
     "demand for {products} and increase our costs of labor, materials and freight."),
    ("Competition", "We face intense competition from larger and smaller firms, some of which have greater financial "
     "resources; pricing pressure could reduce our margins and market share."),
    ("Supply chain", "We rely on a limited number of suppliers for certain components and inputs. Disruptions, "
     "shortages or price increases could delay deliveries and harm our results of operations."),
    ("Cybersecurity", "A breach of our information systems, or of those of our vendors, could disrupt operations, "
     "expose confidential data and lead to litigation, regulatory penalties and reputational harm."),
    ("Indebtedness", "Our outstanding debt requires us to dedicate part of our operating cash flow to interest "
     "payments, and covenants in our credit agreement limit some of our financing and investing activities."),
    ("Regulation", "We are subject to complex and changing laws and regulations in the jurisdictions where we "
     "operate; compliance costs or violations could adversely affect our business."),
    ("Key personnel", "Our success depends on our ability to attract and retain senior management and skilled "
     "employees; the loss of key people could disrupt our strategy."),
    ("Foreign currency", "A portion of our revenue and costs is denominated in currencies other than the U.S. dollar, "
     "and exchange-rate movements could reduce our reported results."),
    ("Climate and weather", "Severe weather events and longer-term climate change could damage facilities, disrupt "
     "logistics and change demand patterns for our products and services."),
)


ELABORATIONS = (
    "If any of these events occurred, our revenue, margins and cash flows could decline, and the trading price of our "
    "common stock could fall.",
    "We may not be able to anticipate or respond effectively to these developments, and our insurance may not cover "
    "all resulting losses.",
    "These factors are difficult to predict and may also affect our customers and suppliers, amplifying their effect "
    "on our business.",
    "Mitigation plans we adopt may be costly and may not succeed, which could require us to change our strategy or "
    "reduce investment.",
)
SEGMENT_LINES = (
    "The {seg} segment competes on product performance, reliability and total cost of ownership.",
    "{seg} sells through a direct sales force and a network of distributors, and most contracts renew annually.",
    "In fiscal {fy}, {seg} introduced several new offerings and expanded capacity to meet customer demand.",
    "Demand in {seg} depends on customers' budgets, end-market activity and the pace of technology adoption.",
    "Backlog in {seg} remained healthy at year end, supported by multi-year agreements with large customers.",
    "{seg} margins depend on volume, mix, pricing discipline and the cost of materials, freight and labor.",
)
DRIVERS = (
    "higher volumes and favorable pricing", "new customer wins and product launches",
    "lower volumes in a softer market",
    "price increases partly offset by lower volumes", "strong demand from large customers", "favorable product mix",
    "unfavorable foreign currency movements", "the timing of large orders",
)


def _segment_prose(c: CompanyProfile, rng: random.Random) -> list[str]:
    return [" ".join([f"{seg}."] + [line.format(seg=seg, fy=FY) for line in rng.sample(SEGMENT_LINES, 3)])
            for seg in c.segments]


def _segment_results(names: tuple[str, ...], now: dict[str, int], before: dict[str, int], rng: random.Random,
                     period: str) -> str:
    out = []
    for name in names:
        g = (now[name] - before[name]) / before[name] * 100
        verb = "increased" if g >= 0 else "decreased"
        out.append(f"{name} revenue {verb} {abs(g):.1f}% to {money(now[name])} in {period}, reflecting "
                   f"{rng.choice(DRIVERS)}.")
    return " ".join(out)


@dataclass
class Filing:
    company: CompanyProfile
    fin: Financials
    doc_type: str  # FinanceBench code: 10k / 10q
    period: str  # 2023 or 2024Q1
    anchors: dict[str, Anchor] = field(default_factory=dict)
    pdf_bytes: bytes = b""
    page_texts: list[str] = field(default_factory=list)

    @property
    def doc_name(self) -> str:
        return f"{self.company.code}_{self.period}_{self.doc_type.upper()}"


def _cover(pdf: FilingPDF, c: CompanyProfile, form: str, period_text: str) -> None:
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 13)
    pdf.multi_cell(0, 7, "UNITED STATES SECURITIES AND EXCHANGE COMMISSION (FICTIONAL FILING)", align="C")
    pdf.ln(6)
    pdf.set_font("Helvetica", "B", 20)
    pdf.multi_cell(0, 10, f"FORM {form}", align="C")
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, period_text, align="C")
    pdf.ln(8)
    pdf.set_font("Helvetica", "B", 16)
    pdf.multi_cell(0, 8, c.name, align="C")
    pdf.set_font("Helvetica", size=10)
    pdf.ln(6)
    pdf.multi_cell(0, 5, f"{c.name} is a fictional company. This document was generated by the finrag synth command "
                         f"for demonstrations and tests of the FinRAG Warehouse; all names and figures are invented.",
                   align="C")


def build_10k(c: CompanyProfile, fin: Financials, rng: random.Random) -> Filing:
    pdf = FilingPDF(c.name, "10-K")
    y = fin.years
    cur, prev, old = y[FY], y[FY - 1], y[FY - 2]
    _cover(pdf, c, "10-K", f"ANNUAL REPORT FOR THE FISCAL YEAR ENDED {D_FY.upper()}")

    pdf.new_section("Table of Contents")
    for item, title in (("Part I, Item 1", "Business"), ("Item 1A", "Risk Factors"), ("Item 2", "Properties"),
                        ("Item 3", "Legal Proceedings"), ("Part II, Item 5", "Market for Registrant's Common Equity"),
                        ("Item 7", "Management's Discussion and Analysis"),
                        ("Item 8", "Financial Statements and Supplementary Data"),
                        ("Item 9A", "Controls and Procedures")):
        pdf.cell(60, 6, item)
        pdf.cell(0, 6, title)
        pdf.ln()
    pdf.ln(4)
    pdf.para("Forward-looking statements. This annual report contains forward-looking statements about our business, "
             "financial condition and results. Words such as expect, anticipate, intend, plan and believe identify "
             "such statements, which involve risks and uncertainties described under Risk Factors. Actual results "
             "could differ materially, and we undertake no obligation to update these statements.")

    pdf.new_section("Item 1. Business")
    seg_list = ", ".join(c.segments[:-1]) + f" and {c.segments[-1]}"
    employees = f"As of {D_FY}, we had approximately {fin.employees:,} full-time employees."
    pdf.para(f"{c.name} is a {c.sector.lower()} company that provides {c.products} to customers in North America, "
             "Europe and Asia Pacific.",
             f"We manage our business through {len(c.segments)} reportable segments: {seg_list}.",
             "Our strategy is to grow in our core markets, expand recurring revenue and improve operating "
             "efficiency through automation and disciplined capital allocation.")
    for text in _segment_prose(c, rng):
        pdf.para(text)
    pdf.para("Customers. No single customer accounted for more than 10% of our consolidated revenue in any of the "
             "last three fiscal years. Our ten largest customers together represented approximately "
             f"{rng.randint(12, 34)}% of revenue in fiscal {FY}.",
             "Seasonality. Demand is moderately seasonal, with the fourth quarter typically the strongest.")
    pdf.para("Human capital.", employees, "We invest in training, safety programs and competitive benefits, and "
             "we measure engagement through an annual employee survey.", anchors={"biz:employees": employees})
    pdf.para("Intellectual property. We rely on patents, trademarks, trade secrets and contractual restrictions to "
             "protect our technology and brands. We do not believe that any single patent is material to our "
             "business as a whole.")
    pdf.para(f"Research and development. Research and development expense was {money(cur.rd)} in fiscal {FY}. Our "
             "engineering teams work on new products, cost reduction and the quality and safety of existing lines.")
    pdf.para("Competition and regulation. Our markets are competitive and fragmented. We are subject to laws on "
             "product safety, the environment, data privacy, anti-corruption, trade and employment, and we maintain "
             "a compliance program overseen by the Audit Committee of our Board of Directors.")

    risks = rng.sample(RISKS, 7)
    pdf.new_section("Item 1A. Risk Factors")
    pdf.para("An investment in our securities involves risks. The risks described below could materially and "
             "adversely affect our business, financial condition and results of operations.")
    for title, text in risks[:4]:
        pdf.para(f"{title}.", text.format(products=c.products), *rng.sample(ELABORATIONS, 2))
    pdf.new_section("Item 1A. Risk Factors (continued)")
    for title, text in risks[4:]:
        pdf.para(f"{title}.", text.format(products=c.products), *rng.sample(ELABORATIONS, 2))
    pdf.heading("Item 2. Properties")
    pdf.para(f"Our headquarters are in a leased office campus. We operate {rng.randint(4, 40)} principal facilities "
             "for manufacturing, distribution, research and administration, which we consider suitable and adequate "
             "for our current needs.")
    pdf.heading("Item 3. Legal Proceedings")
    pdf.para("From time to time we are involved in claims and lawsuits arising in the ordinary course of business. "
             "We do not expect the outcome of pending matters to have a material adverse effect on our financial "
             "position.")

    pdf.new_section("Item 5. Market for Registrant's Common Equity and Issuer Purchases of Equity Securities")
    dps = round(cur.dividends / cur.shares, 2)
    dividend = f"We paid cash dividends of ${dps:.2f} per share in fiscal {FY}, or {money(cur.dividends)} in total."
    buyback = f"During fiscal {FY} we repurchased common stock for {money(cur.buybacks)}."
    pdf.para("Our common stock is listed on a national securities exchange (fictional listing).", dividend,
             "The Board of Directors reviews the dividend each quarter and may change it at any time.", buyback,
             anchors={"item5:dividend": dividend, "item5:buyback": buyback})
    pdf.para("Equity compensation plan information is incorporated by reference from our proxy statement.")

    pdf.new_section("Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations")
    growth = (cur.revenue - prev.revenue) / prev.revenue * 100
    direction = "increased" if growth >= 0 else "decreased"
    rev_sentence = (f"Revenue {direction} {abs(growth):.1f}% to {money(cur.revenue)} in fiscal {FY}, compared with "
                    f"{money(prev.revenue)} in fiscal {FY - 1}.")
    gm_sentence = (f"Gross margin was {cur.gross / cur.revenue * 100:.1f}% in fiscal {FY}, compared with "
                   f"{prev.gross / prev.revenue * 100:.1f}% in fiscal {FY - 1}.")
    pdf.para(f"Overview. {c.name} reports results in {len(c.segments)} segments. The following discussion should be "
             "read together with the consolidated financial statements and notes in Item 8.")
    pdf.para("Results of operations.", rev_sentence, gm_sentence,
             f"Operating income was {money(cur.operating_income)}, and net income was {money(cur.net_income)}, or "
             f"${cur.eps:.2f} per diluted share.",
             anchors={"mdna:revenue": rev_sentence, "mdna:gross_margin": gm_sentence})
    pdf.para("Research and development and selling, general and administrative expenses reflected continued "
             "investment in new products, go-to-market capacity and information systems, partly offset by "
             "productivity programs.")
    pdf.para("Segment results.", _segment_results(c.segments, fin.segments[FY], fin.segments[FY - 1], rng,
                                                  f"fiscal {FY}"))
    seg_rows = [(name, [fmt(fin.segments[FY][name]), fmt(fin.segments[FY - 1][name])], False) for name in c.segments]
    seg_rows.append(("Total revenue", [fmt(cur.revenue), fmt(prev.revenue)], True))
    pdf.table("seg", "Revenue by segment", [f"FY{FY}", f"FY{FY - 1}"], seg_rows)
    pdf.bar_chart("chart", f"Figure 1. Revenue by fiscal year, {FY - 2} to {FY} (in millions of U.S. dollars).",
                  [(f"FY{FY - 2}", old.revenue), (f"FY{FY - 1}", prev.revenue), (f"FY{FY}", cur.revenue)])

    pdf.new_section("Item 7. Liquidity and Capital Resources")
    bs = fin.balances[D_FY]
    cash_sentence = f"As of {D_FY}, we had cash and cash equivalents of {money(bs.cash)}."
    capex_sentence = (f"Capital expenditures were {money(cur.capex)} in fiscal {FY}, primarily for capacity, "
                      "facilities and information technology.")
    pdf.para("Our primary sources of liquidity are cash on hand, cash generated by operations and our revolving "
             "credit facility.", cash_sentence,
             f"Net cash provided by operating activities was {money(cur.cfo)} in fiscal {FY}.", capex_sentence,
             anchors={"liq:cash": cash_sentence, "liq:capex": capex_sentence})
    pdf.para(f"Total debt was {money(bs.short_debt + bs.long_debt)} at year end. We believe our existing cash, "
             "cash flows and borrowing capacity will be sufficient to fund operations, capital expenditures, "
             "dividends and debt service for at least the next twelve months.")
    pdf.para(f"Credit facility. We have a {money(round(cur.revenue * 0.1, -2) or 100)} revolving credit facility "
             f"that expires in {FY + 5}; no amounts were outstanding under it at year end. The facility requires us "
             "to maintain a maximum ratio of debt to earnings before interest, taxes, depreciation and amortization.")
    pdf.para(f"Share repurchases and dividends. In fiscal {FY} we returned {money(cur.dividends + cur.buybacks)} to "
             "shareholders through dividends and share repurchases. The remaining repurchase authorization does not "
             "expire, and the timing of purchases depends on market conditions.")
    pdf.para("Critical accounting estimates. Preparing our financial statements requires estimates that affect "
             "revenue recognition for multi-element arrangements, inventory reserves, the recoverability of "
             "goodwill, income tax positions and contingencies. Actual results could differ from these estimates, "
             "and changes in them are recorded in the period they become known.")

    pdf.new_section("Item 8. Financial Statements and Supplementary Data")
    pdf.table("is", f"{c.name}: Consolidated Statements of Operations",
              [f"FY{FY}", f"FY{FY - 1}", f"FY{FY - 2}"], income_rows([cur, prev, old]))
    pdf.new_section(f"{c.name}: Consolidated Balance Sheets")
    pdf.table("bs", f"As of {D_FY} and {D_PFY}", [f"Dec 31, {FY}", f"Dec 31, {FY - 1}"],
              balance_rows([fin.balances[D_FY], fin.balances[D_PFY]]))
    pdf.new_section(f"{c.name}: Consolidated Statements of Cash Flows")
    pdf.table("cf", "Fiscal years ended December 31", [f"FY{FY}", f"FY{FY - 1}", f"FY{FY - 2}"],
              cash_flow_rows([cur, prev, old]))

    pdf.new_section("Notes to Consolidated Financial Statements")
    pdf.para("Note 1. Summary of significant accounting policies. The consolidated financial statements include the "
             "accounts of the company and its subsidiaries; intercompany balances are eliminated. Preparing them "
             "requires estimates and assumptions that affect reported amounts.")
    pdf.para("Note 2. Revenue recognition. We recognize revenue when control of goods or services passes to the "
             "customer, in the amount of consideration we expect to receive. Payment terms are typically 30 to 60 "
             "days.")
    tax_rate = cur.tax / cur.pretax * 100
    tax_sentence = f"Our effective income tax rate was {tax_rate:.1f}% in fiscal {FY}."
    pdf.para("Note 3. Income taxes.", tax_sentence,
             "The rate differs from the U.S. federal statutory rate of 21% mainly because of state taxes, foreign "
             "rate differences and research credits.", anchors={"note:tax": tax_sentence})
    pdf.para(f"Note 4. Debt. Long-term debt of {money(bs.long_debt)} consists of senior notes maturing between "
             f"{FY + 3} and {FY + 12}, with a weighted-average interest rate of {rng.uniform(3.1, 5.9):.2f}%.")
    pdf.para("Note 5. Leases. We lease offices, warehouses and equipment under operating leases with remaining terms "
             "of one to fifteen years. Right-of-use assets are included in other long-term assets.")
    pdf.para(f"Note 6. Stock-based compensation. Stock-based compensation expense was {money(cur.sbc)} in fiscal "
             f"{FY}, mainly for restricted stock units that vest over three to four years.")
    pdf.para("Note 7. Segment information. Our chief operating decision maker evaluates segment performance on "
             f"revenue and segment operating income. The {len(c.segments)} reportable segments are "
             f"{', '.join(c.segments)}; corporate costs are not allocated.")

    pdf.new_section("Item 9A. Controls and Procedures")
    pdf.para("Management evaluated the effectiveness of our disclosure controls and procedures as of the end of the "
             "period covered by this report and concluded that they were effective. There were no changes in "
             "internal control over financial reporting during the fourth quarter that materially affected it.")
    pdf.heading("Signatures")
    pdf.para(f"Pursuant to the requirements of the Securities Exchange Act of 1934, {c.name} has duly caused this "
             "report to be signed on its behalf by the undersigned, thereunto duly authorized.")
    return _finish(Filing(c, fin, "10k", str(FY)), pdf)


def build_10q(c: CompanyProfile, fin: Financials, rng: random.Random) -> Filing:
    pdf = FilingPDF(c.name, "10-Q")
    cur, prev = fin.quarters[Q_CUR], fin.quarters[Q_PRIOR]
    _cover(pdf, c, "10-Q", f"QUARTERLY REPORT FOR THE QUARTERLY PERIOD ENDED {D_Q.upper()}")

    pdf.new_section("Index")
    for item, title in (("Part I, Item 1", "Financial Statements"), ("Item 2", "Management's Discussion and Analysis"),
                        ("Item 3", "Quantitative and Qualitative Disclosures About Market Risk"),
                        ("Item 4", "Controls and Procedures"), ("Part II, Item 1", "Legal Proceedings"),
                        ("Item 1A", "Risk Factors"), ("Item 6", "Exhibits")):
        pdf.cell(60, 6, item)
        pdf.cell(0, 6, title)
        pdf.ln()
    pdf.ln(4)
    pdf.para("This quarterly report contains forward-looking statements that involve risks and uncertainties. "
             f"Read it together with our annual report on Form 10-K for the fiscal year ended {D_FY}.")

    pdf.new_section("Part I. Item 1. Financial Statements (unaudited)")
    pdf.table("qis", f"{c.name}: Condensed Consolidated Statements of Operations (three months ended March 31)",
              [Q_CUR, Q_PRIOR], income_rows([cur, prev]))
    pdf.new_section(f"{c.name}: Condensed Consolidated Balance Sheets")
    pdf.table("qbs", f"As of {D_Q} (unaudited) and {D_FY}", [f"Mar 31, {FY + 1}", f"Dec 31, {FY}"],
              balance_rows([fin.balances[D_Q], fin.balances[D_FY]]))
    pdf.new_section(f"{c.name}: Condensed Consolidated Statements of Cash Flows")
    pdf.table("qcf", "Three months ended March 31", [Q_CUR, Q_PRIOR], cash_flow_rows([cur, prev]))

    pdf.new_section("Notes to Condensed Consolidated Financial Statements (unaudited)")
    pdf.para("Note 1. Basis of presentation. These unaudited condensed statements were prepared on the same basis as "
             "the annual statements and include all adjustments necessary for a fair presentation. Results for "
             "interim periods are not necessarily indicative of results for the full year.")
    seg_rows = [(n, [fmt(fin.q_segments[Q_CUR][n]), fmt(fin.q_segments[Q_PRIOR][n])], False) for n in c.segments]
    seg_rows.append(("Total revenue", [fmt(cur.revenue), fmt(prev.revenue)], True))
    pdf.table("qseg", "Note 2. Revenue by segment (three months ended March 31)", [Q_CUR, Q_PRIOR], seg_rows)
    pdf.para("Note 3. Commitments and contingencies. We are party to various claims in the ordinary course of "
             "business; we do not expect them to have a material effect on our financial statements.")

    pdf.new_section("Item 2. Management's Discussion and Analysis of Financial Condition and Results of Operations")
    growth = (cur.revenue - prev.revenue) / prev.revenue * 100
    direction = "increased" if growth >= 0 else "decreased"
    rev_sentence = (f"Revenue {direction} {abs(growth):.1f}% to {money(cur.revenue)} in the first quarter of "
                    f"{FY + 1}, compared with {money(prev.revenue)} in the first quarter of {FY}.")
    pdf.para(rev_sentence, f"Gross margin was {cur.gross / cur.revenue * 100:.1f}%, and operating income was "
             f"{money(cur.operating_income)}.", anchors={"qmdna:revenue": rev_sentence})
    pdf.para("Segment results.", _segment_results(c.segments, fin.q_segments[Q_CUR], fin.q_segments[Q_PRIOR], rng,
                                                  f"the first quarter of {FY + 1}"))
    pdf.bar_chart("qchart", f"Figure 1. Revenue in the first quarter, {FY} and {FY + 1} (in millions of U.S. dollars).",
                  [(Q_PRIOR, prev.revenue), (Q_CUR, cur.revenue)])

    pdf.new_section("Liquidity and Capital Resources")
    cash_sentence = f"As of {D_Q}, we had cash and cash equivalents of {money(cur.cash_end)}."
    pdf.para(cash_sentence, f"Net cash provided by operating activities was {money(cur.cfo)} in the quarter, and "
             f"capital expenditures were {money(cur.capex)}.", anchors={"qliq:cash": cash_sentence})
    pdf.para(f"During the quarter we paid dividends of {money(cur.dividends)} and repurchased shares for "
             f"{money(cur.buybacks)}. We believe cash on hand, operating cash flows and our undrawn revolving credit "
             "facility are sufficient for our needs for at least the next twelve months.")
    pdf.heading("Item 3. Quantitative and Qualitative Disclosures About Market Risk")
    pdf.para("There were no material changes in our market risk exposures since our most recent annual report.")
    pdf.heading("Item 4. Controls and Procedures")
    pdf.para("Our disclosure controls and procedures were effective as of the end of the period, and there were no "
             "changes in internal control over financial reporting that materially affected it during the quarter.")

    pdf.new_section("Part II. Other Information")
    pdf.heading("Item 1. Legal Proceedings")
    pdf.para("See Note 3 to the condensed consolidated financial statements.")
    pdf.heading("Item 1A. Risk Factors")
    title, text = rng.choice(RISKS)
    pdf.para("There have been no material changes to the risk factors in our annual report, except as follows.",
             f"{title}.", text.format(products=c.products))
    pdf.heading("Item 6. Exhibits")
    pdf.para("31.1 and 31.2 Certifications; 32.1 Section 1350 certification (fictional exhibits).")
    return _finish(Filing(c, fin, "10q", f"{FY + 1}Q1"), pdf)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _finish(filing: Filing, pdf: FilingPDF) -> Filing:
    filing.anchors = dict(pdf.anchors)
    filing.pdf_bytes = bytes(pdf.output())
    # FinanceBench's evidence_text_full_page is the page's extracted text: read our own PDF back the same way
    filing.page_texts = [p.extract_text() or "" for p in PdfReader(io.BytesIO(filing.pdf_bytes)).pages]
    for key, a in filing.anchors.items():
        if _norm(a.text) not in _norm(filing.page_texts[a.page]):
            raise RuntimeError(f"{filing.doc_name}: anchor {key} not found on page {a.page}")  # a generator bug
    return filing

