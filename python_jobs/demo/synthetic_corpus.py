"""`finrag synth`: the project's own demo corpus, written in FinanceBench's file formats.

Fictional companies (several sectors) each get a 10-K (fiscal 2023) and a 10-Q (first quarter of 2024) as real PDFs
drawn with fpdf2: prose sections (Business, Risk Factors, MD&A, notes), financial statements whose numbers are
internally consistent (gross profit = revenue - cost of revenue, total assets = total liabilities + equity, the cash
flow statement rolls the balance sheet's cash forward, the 10-Q's December 31 column equals the 10-K's), and a bar
chart with a caption. Questions are generated from the numbers placed on known pages, so every gold page is known.

Output (the layout `finrag ingest financebench` reads):

    DIR/questions.jsonl   one FinanceBench question per line (financebench_open_source.jsonl schema)
    DIR/documents.jsonl   one document per line (financebench_document_information.jsonl schema)
    DIR/pdfs/<doc_name>.pdf

Deterministic for a seed: the same seed gives byte-identical files (the PDFs' creation date is fixed).
Nothing here is real data: the project must not ship copies of public benchmarks.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF
from pypdf import PdfReader

from python_jobs.core.console import progress
from python_jobs.core.errors import InputError

FIXED_CREATION_DATE = datetime(2024, 5, 1, tzinfo=UTC)  # fpdf2 embeds a creation date: fix it for identical bytes
FY = 2023  # the 10-K's fiscal year; the 10-Q covers the first quarter of FY + 1
Q_CUR, Q_PRIOR = f"Q1 {FY + 1}", f"Q1 {FY}"
D_Q, D_FY, D_PFY = f"March 31, {FY + 1}", f"December 31, {FY}", f"December 31, {FY - 1}"


@dataclass(frozen=True)
class CompanyProfile:
    name: str
    sector: str  # GICS sector, as FinanceBench's gics_sector
    segments: tuple[str, ...]
    products: str  # what it sells, for prose
    gross_margin: tuple[float, float]
    rd: float  # R&D / revenue
    sga: float  # SG&A / revenue
    capex: float  # capital expenditure / revenue
    inventory_days: int

    @property
    def possessive(self) -> str:
        return f"{self.name}'" if self.name.endswith("s") else f"{self.name}'s"

    @property
    def code(self) -> str:
        # FinanceBench doc names start with the company in capitals, no spaces (e.g. AMERICANEXPRESS)
        return re.sub(r"[^A-Z0-9]", "", self.name.split()[0].upper())


# Fictional companies (names made up for this project).
COMPANIES: tuple[CompanyProfile, ...] = (
    CompanyProfile("Northquill Robotics", "Industrials", ("Automation Systems", "Field Services"),
                   "industrial robots, motion controllers and maintenance services", (0.31, 0.36), 0.06, 0.14, 0.05,
                   75),
    CompanyProfile("Veridane Therapeutics", "Health Care", ("Specialty Medicines", "Diagnostics"),
                   "specialty medicines and laboratory diagnostic kits", (0.68, 0.74), 0.18, 0.27, 0.04, 140),
    CompanyProfile("Pallaster Foods", "Consumer Staples", ("Packaged Foods", "Beverages", "International"),
                   "packaged snacks, breakfast foods and bottled beverages", (0.36, 0.41), 0.01, 0.22, 0.04, 45),
    CompanyProfile("Quorvex Semiconductor", "Information Technology", ("Data Center", "Embedded", "Licensing"),
                   "data-center processors, embedded controllers and chip design licenses", (0.55, 0.62), 0.21, 0.11,
                   0.08, 110),
    CompanyProfile("Brightmoor Energy", "Energy", ("Upstream", "Midstream"),
                   "crude oil, natural gas and pipeline transportation", (0.38, 0.45), 0.005, 0.06, 0.16, 20),
    CompanyProfile("Halvern Retail Group", "Consumer Discretionary", ("Stores", "Online"),
                   "home furnishings and apparel through stores and its website", (0.33, 0.38), 0.0, 0.25, 0.03, 80),
    CompanyProfile("Tarnwick Materials", "Materials", ("Specialty Chemicals", "Coatings"),
                   "specialty chemicals, industrial coatings and adhesives", (0.27, 0.32), 0.03, 0.12, 0.06, 60),
    CompanyProfile("Solvanta Utilities", "Utilities", ("Regulated Electric", "Renewables"),
                   "regulated electricity distribution and wind and solar generation", (0.42, 0.47), 0.0, 0.12, 0.22,
                   15),
    CompanyProfile("Corvantis Telecom", "Communication Services", ("Wireless", "Broadband", "Enterprise"),
                   "wireless plans, home broadband and enterprise networking", (0.56, 0.61), 0.02, 0.30, 0.14, 10),
    CompanyProfile("Ilexia Software", "Information Technology", ("Subscriptions", "Professional Services"),
                   "cloud software subscriptions and implementation services", (0.74, 0.80), 0.22, 0.33, 0.02, 0),
)


# ---- numbers -------------------------------------------------------------------------------------------------
def fmt(x: int | float) -> str:
    """Statement style: thousands separators, negatives in parentheses."""
    if isinstance(x, float):
        s = f"{abs(x):,.2f}"
    else:
        s = f"{abs(x):,}"
    return f"({s})" if x < 0 else s


def money(x: int) -> str:
    return f"${x:,} million"


def pct(x: float) -> str:
    return f"{x:.1f}%"


@dataclass
class Period:
    """One column of the statements (all amounts in USD millions, EPS in dollars)."""

    revenue: int
    cogs: int
    rd: int
    sga: int
    interest: int
    other: int
    tax_rate: float
    shares: int
    d_and_a: int = 0
    sbc: int = 0
    working_capital: int = 0
    capex: int = 0
    acquisitions: int = 0
    dividends: int = 0
    buybacks: int = 0
    cash_begin: int = 0
    cash_end: int = 0

    @property
    def gross(self) -> int:
        return self.revenue - self.cogs

    @property
    def opex(self) -> int:
        return self.rd + self.sga

    @property
    def operating_income(self) -> int:
        return self.gross - self.opex

    @property
    def pretax(self) -> int:
        return self.operating_income - self.interest + self.other

    @property
    def tax(self) -> int:
        return round(self.pretax * self.tax_rate)

    @property
    def net_income(self) -> int:
        return self.pretax - self.tax

    @property
    def eps(self) -> float:
        return round(self.net_income / self.shares, 2)

    @property
    def cfo(self) -> int:
        return self.net_income + self.d_and_a + self.sbc + self.working_capital

    @property
    def cfi(self) -> int:
        return -self.capex - self.acquisitions

    @property
    def net_debt(self) -> int:
        # financing is the plug that lands cash where the balance sheet has it
        return self.cash_end - self.cash_begin - self.cfo - self.cfi + self.dividends + self.buybacks

    @property
    def cff(self) -> int:
        return self.net_debt - self.dividends - self.buybacks


@dataclass
class Balance:
    cash: int
    receivables: int
    inventories: int
    other_current: int
    ppe: int
    goodwill: int
    other_assets: int
    payables: int
    accrued: int
    short_debt: int
    long_debt: int
    other_liabilities: int

    @property
    def current_assets(self) -> int:
        return self.cash + self.receivables + self.inventories + self.other_current

    @property
    def total_assets(self) -> int:
        return self.current_assets + self.ppe + self.goodwill + self.other_assets

    @property
    def current_liabilities(self) -> int:
        return self.payables + self.accrued + self.short_debt

    @property
    def total_liabilities(self) -> int:
        return self.current_liabilities + self.long_debt + self.other_liabilities

    @property
    def equity(self) -> int:
        return self.total_assets - self.total_liabilities


@dataclass
class Financials:
    years: dict[int, Period]  # FY-2 .. FY
    quarters: dict[str, Period]  # Q_PRIOR, Q_CUR
    balances: dict[str, Balance]  # D_PFY, D_FY, D_Q
    segments: dict[int, dict[str, int]]  # FY-1, FY -> segment -> revenue
    q_segments: dict[str, dict[str, int]]
    employees: int


def _split(total: int, n: int, rng: random.Random) -> list[int]:
    weights = [rng.uniform(0.6, 1.6) for _ in range(n)]
    parts = [round(total * w / sum(weights)) for w in weights]
    parts[0] += total - sum(parts)
    return parts


def _period(c: CompanyProfile, revenue: int, rng: random.Random, shares: int, debt: int, gm: float) -> Period:
    gm += rng.uniform(-0.012, 0.012)  # margins drift a little from period to period
    return Period(
        revenue=revenue,
        cogs=round(revenue * (1 - gm)),
        rd=round(revenue * c.rd * rng.uniform(0.9, 1.1)),
        sga=round(revenue * c.sga * rng.uniform(0.9, 1.1)),
        interest=max(1, round(debt * rng.uniform(0.035, 0.055))),
        other=rng.randint(-15, 25),
        tax_rate=rng.uniform(0.17, 0.26),
        shares=shares,
    )


def _balance(c: CompanyProfile, p: Period, annual_revenue: int, cash: int, rng: random.Random, debt: int) -> Balance:
    cogs_ratio = p.cogs / p.revenue
    b = Balance(
        cash=cash,
        receivables=round(annual_revenue * rng.uniform(0.09, 0.16)),
        inventories=round(annual_revenue * cogs_ratio * c.inventory_days / 365),
        other_current=round(annual_revenue * rng.uniform(0.02, 0.05)),
        ppe=round(annual_revenue * c.capex * rng.uniform(4.0, 6.0)),
        goodwill=round(annual_revenue * rng.uniform(0.10, 0.35)),
        other_assets=round(annual_revenue * rng.uniform(0.04, 0.10)),
        payables=round(annual_revenue * cogs_ratio * rng.uniform(0.08, 0.13)),
        accrued=round(annual_revenue * rng.uniform(0.04, 0.08)),
        short_debt=round(debt * rng.uniform(0.05, 0.12)),
        long_debt=debt,
        other_liabilities=round(annual_revenue * rng.uniform(0.03, 0.07)),
    )
    # keep equity a healthy share of assets: scale liabilities down when they would leave too little
    min_equity = round(b.total_assets * rng.uniform(0.25, 0.45))
    if b.equity < min_equity:
        scale = (b.total_assets - min_equity) / b.total_liabilities
        for name in ("payables", "accrued", "short_debt", "long_debt", "other_liabilities"):
            setattr(b, name, round(getattr(b, name) * scale))
    return b


def make_financials(c: CompanyProfile, rng: random.Random) -> Financials:
    base = rng.randint(9, 250) * 100 + rng.randint(0, 99)
    shares = rng.randint(40, 900)
    debt = round(base * rng.uniform(0.15, 0.45))
    gm = rng.uniform(*c.gross_margin)
    revenues = [base]
    for _ in range(2):
        revenues.append(round(revenues[-1] * (1 + rng.uniform(-0.04, 0.16))))
    years: dict[int, Period] = {}
    cash = round(base * rng.uniform(0.08, 0.18))
    for i, year in enumerate(range(FY - 2, FY + 1)):
        p = _period(c, revenues[i], rng, shares, debt, gm)
        shares = round(shares * rng.uniform(0.97, 1.0))  # buybacks shrink the share count
        p.d_and_a = round(p.revenue * c.capex * rng.uniform(0.6, 0.9))
        p.sbc = round(p.revenue * rng.uniform(0.005, 0.03))
        p.working_capital = round(p.revenue * rng.uniform(-0.03, 0.02))
        p.capex = round(p.revenue * c.capex * rng.uniform(0.85, 1.15))
        p.acquisitions = rng.choice([0, 0, round(p.revenue * rng.uniform(0.01, 0.05))])
        p.dividends = round(max(p.net_income, 0) * rng.uniform(0.2, 0.4))
        p.buybacks = round(max(p.net_income, 0) * rng.uniform(0.0, 0.3))
        p.cash_begin = cash
        cash = round(cash * rng.uniform(0.9, 1.25))
        p.cash_end = cash
        years[year] = p
    # the first quarters: a quarter of the year's revenue, a little growth year over year
    quarters: dict[str, Period] = {}
    q_begin = {Q_PRIOR: years[FY - 1].cash_end, Q_CUR: years[FY].cash_end}
    q_rev = {Q_PRIOR: round(years[FY].revenue * rng.uniform(0.22, 0.26))}
    q_rev[Q_CUR] = round(q_rev[Q_PRIOR] * (1 + rng.uniform(-0.05, 0.15)))
    for label in (Q_PRIOR, Q_CUR):
        p = _period(c, q_rev[label], rng, shares, debt, gm)
        p.interest = max(1, round(p.interest / 4))
        p.other = round(p.other / 4)
        p.d_and_a = round(p.revenue * c.capex * rng.uniform(0.6, 0.9))
        p.sbc = round(p.revenue * rng.uniform(0.005, 0.03))
        p.working_capital = round(p.revenue * rng.uniform(-0.08, 0.03))
        p.capex = round(p.revenue * c.capex * rng.uniform(0.8, 1.2))
        p.dividends = round(max(p.net_income, 0) * rng.uniform(0.2, 0.4))
        p.buybacks = round(max(p.net_income, 0) * rng.uniform(0.0, 0.2))
        p.cash_begin = q_begin[label]
        p.cash_end = round(p.cash_begin * rng.uniform(0.85, 1.12))
        quarters[label] = p
    balances = {
        D_PFY: _balance(c, years[FY - 1], years[FY - 1].revenue, years[FY - 1].cash_end, rng, debt),
        D_FY: _balance(c, years[FY], years[FY].revenue, years[FY].cash_end, rng, round(debt * rng.uniform(0.9, 1.1))),
    }
    balances[D_Q] = _balance(c, quarters[Q_CUR], years[FY].revenue, quarters[Q_CUR].cash_end, rng,
                             balances[D_FY].long_debt)
    segments = {y: dict(zip(c.segments, _split(years[y].revenue, len(c.segments), rng), strict=True))
                for y in (FY - 1, FY)}
    q_segments = {q: dict(zip(c.segments, _split(quarters[q].revenue, len(c.segments), rng), strict=True))
                  for q in (Q_PRIOR, Q_CUR)}
    employees = round(base * rng.uniform(0.8, 3.0) / 10) * 10
    return Financials(years, quarters, balances, segments, q_segments, employees)


# ---- PDF drawing ---------------------------------------------------------------------------------------------
@dataclass
class Anchor:
    page: int  # 0-based page of the PDF
    text: str  # the row or sentence as written


class FilingPDF(FPDF):
    """An fpdf2 document that remembers on which page each anchored row or sentence was written."""

    def __init__(self, company: str, form: str):
        super().__init__(format="letter")
        self.company, self.form = company, form
        self.anchors: dict[str, Anchor] = {}
        self.set_creation_date(FIXED_CREATION_DATE)
        self.set_title(f"{company} Form {form}")
        self.set_author(f"{company} (fictional, generated by finrag synth)")
        self.set_creator("finrag synth")
        self.set_producer("finrag synth (fpdf2)")
        self.set_auto_page_break(True, margin=18)
        self.set_margins(18, 16, 18)

    def multi_cell(self, w, h=None, text="", *args, **kw):  # type: ignore[no-untyped-def, override]
        # fpdf2 leaves the cursor right of a multi_cell by default; filings flow top to bottom
        kw.setdefault("new_x", "LMARGIN")
        kw.setdefault("new_y", "NEXT")
        return super().multi_cell(w, h, text, *args, **kw)

    def footer(self) -> None:
        self.set_y(-13)
        self.set_font("Helvetica", size=8)
        self.cell(0, 5, f"{self.company} | Form {self.form} | {self.page_no()}", align="C")

    @property
    def page_index(self) -> int:
        return self.page_no() - 1

    def new_section(self, title: str) -> None:
        self.add_page()
        self.heading(title)

    def heading(self, title: str) -> None:
        self.set_font("Helvetica", "B", 12)
        self.multi_cell(0, 6, title)
        self.ln(2)
        self.set_font("Helvetica", size=10)

    def para(self, *sentences: str, anchors: dict[str, str] | None = None) -> None:
        """A paragraph; `anchors` names sentences (key -> sentence) that questions cite."""
        self.set_font("Helvetica", size=10)
        text = " ".join(sentences)
        height = self.multi_cell(0, 5, text, dry_run=True, output="HEIGHT")
        if anchors and self.get_y() + height > self.page_break_trigger:
            self.add_page()  # a cited paragraph never straddles two pages: its gold page must be one page
        for key, sentence in (anchors or {}).items():
            self.anchors[key] = Anchor(self.page_index, sentence)
        self.multi_cell(0, 5, text)
        self.ln(2)
        for key in anchors or {}:  # a paragraph that ran over a page break would make its page ambiguous
            if self.anchors[key].page != self.page_index:
                raise RuntimeError(f"anchored paragraph {key} crossed a page break; shorten the page")

    def table(self, prefix: str, title: str, header: list[str], rows: list[tuple[str, list[str], bool]],
              unit: str = "(in millions of U.S. dollars, except per-share amounts)") -> None:
        """A statement table; each row is anchored as `prefix:label` with the row's text."""
        needed = 12 + 6 * (len(rows) + 2)
        if self.get_y() + needed > self.h - 20:
            self.add_page()
        self.set_font("Helvetica", "B", 11)
        self.multi_cell(0, 6, title)
        self.set_font("Helvetica", "I", 8)
        self.multi_cell(0, 4, unit)
        self.ln(1)
        label_w = self.epw - 30 * len(header)
        self.set_font("Helvetica", "B", 9)
        self.cell(label_w, 6, "")
        for h in header:
            self.cell(30, 6, h, align="R")
        self.ln()
        for label, values, bold in rows:
            self.set_font("Helvetica", "B" if bold else "", 9)
            self.cell(label_w, 5.5, label)
            for v in values:
                self.cell(30, 5.5, v, align="R")
            self.ln()
            self.anchors[f"{prefix}:{label}"] = Anchor(self.page_index, " ".join([label, *values]))
        self.ln(3)
        self.set_font("Helvetica", size=10)

    def bar_chart(self, key: str, caption: str, bars: list[tuple[str, int]]) -> None:
        """A bar chart drawn with fpdf2 primitives: bars, value labels, an axis and a caption."""
        height, bar_w, gap = 60.0, 22.0, 14.0
        if self.get_y() + height + 30 > self.h - 20:
            self.add_page()
        x0, y_base = self.l_margin + 20, self.get_y() + height + 8
        top = max(v for _, v in bars)
        self.set_draw_color(60, 60, 60)
        self.line(x0 - 4, y_base, x0 + len(bars) * (bar_w + gap), y_base)
        self.set_font("Helvetica", size=8)
        for i, (label, value) in enumerate(bars):
            h = height * value / top
            x = x0 + i * (bar_w + gap)
            shade = 70 + 40 * i
            self.set_fill_color(30, shade, 150)
            self.rect(x, y_base - h, bar_w, h, style="F")
            self.set_xy(x - 4, y_base - h - 5)
            self.cell(bar_w + 8, 4, fmt(value), align="C")
            self.set_xy(x - 4, y_base + 1)
            self.cell(bar_w + 8, 4, label, align="C")
        self.set_xy(self.l_margin, y_base + 8)
        self.set_font("Helvetica", "I", 9)
        self.multi_cell(0, 5, caption)
        self.anchors[key] = Anchor(self.page_index, caption)
        for label, value in bars:
            self.anchors[f"{key}:{label}"] = Anchor(self.page_index, f"{fmt(value)} {label}")
        self.ln(3)
        self.set_font("Helvetica", size=10)


def _is_rows(ps: list[Period]) -> list[tuple[str, list[str], bool]]:
    def r(label: str, f: Callable[[Period], int | float], bold: bool = False) -> tuple[str, list[str], bool]:
        return (label, [fmt(f(p)) for p in ps], bold)

    return [
        r("Revenue", lambda p: p.revenue, True),
        r("Cost of revenue", lambda p: p.cogs),
        r("Gross profit", lambda p: p.gross, True),
        r("Research and development", lambda p: p.rd),
        r("Selling, general and administrative", lambda p: p.sga),
        r("Total operating expenses", lambda p: p.opex),
        r("Operating income", lambda p: p.operating_income, True),
        r("Interest expense", lambda p: -p.interest),
        r("Other income (expense), net", lambda p: p.other),
        r("Income before income taxes", lambda p: p.pretax),
        r("Provision for income taxes", lambda p: p.tax),
        r("Net income", lambda p: p.net_income, True),
        r("Diluted earnings per share", lambda p: p.eps),
        r("Weighted-average diluted shares (millions)", lambda p: p.shares),
    ]


def _bs_rows(bs: list[Balance]) -> list[tuple[str, list[str], bool]]:
    def r(label: str, f: Callable[[Balance], int], bold: bool = False) -> tuple[str, list[str], bool]:
        return (label, [fmt(f(b)) for b in bs], bold)

    return [
        r("Cash and cash equivalents", lambda b: b.cash),
        r("Accounts receivable, net", lambda b: b.receivables),
        r("Inventories", lambda b: b.inventories),
        r("Prepaid expenses and other current assets", lambda b: b.other_current),
        r("Total current assets", lambda b: b.current_assets, True),
        r("Property and equipment, net", lambda b: b.ppe),
        r("Goodwill", lambda b: b.goodwill),
        r("Other long-term assets", lambda b: b.other_assets),
        r("Total assets", lambda b: b.total_assets, True),
        r("Accounts payable", lambda b: b.payables),
        r("Accrued liabilities", lambda b: b.accrued),
        r("Short-term debt", lambda b: b.short_debt),
        r("Total current liabilities", lambda b: b.current_liabilities, True),
        r("Long-term debt", lambda b: b.long_debt),
        r("Other long-term liabilities", lambda b: b.other_liabilities),
        r("Total liabilities", lambda b: b.total_liabilities, True),
        r("Total shareholders' equity", lambda b: b.equity, True),
        r("Total liabilities and shareholders' equity", lambda b: b.total_liabilities + b.equity, True),
    ]


def _cf_rows(ps: list[Period]) -> list[tuple[str, list[str], bool]]:
    def r(label: str, f: Callable[[Period], int], bold: bool = False) -> tuple[str, list[str], bool]:
        return (label, [fmt(f(p)) for p in ps], bold)

    return [
        r("Net income", lambda p: p.net_income),
        r("Depreciation and amortization", lambda p: p.d_and_a),
        r("Stock-based compensation", lambda p: p.sbc),
        r("Changes in operating assets and liabilities", lambda p: p.working_capital),
        r("Net cash provided by operating activities", lambda p: p.cfo, True),
        r("Purchases of property and equipment", lambda p: -p.capex),
        r("Acquisitions, net of cash acquired", lambda p: -p.acquisitions),
        r("Net cash used in investing activities", lambda p: p.cfi, True),
        r("Proceeds from (repayments of) debt, net", lambda p: p.net_debt),
        r("Dividends paid", lambda p: -p.dividends),
        r("Repurchases of common stock", lambda p: -p.buybacks),
        r("Net cash provided by (used in) financing activities", lambda p: p.cff, True),
        r("Net increase (decrease) in cash and cash equivalents", lambda p: p.cash_end - p.cash_begin, True),
        r("Cash and cash equivalents at beginning of period", lambda p: p.cash_begin),
        r("Cash and cash equivalents at end of period", lambda p: p.cash_end, True),
    ]


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
              [f"FY{FY}", f"FY{FY - 1}", f"FY{FY - 2}"], _is_rows([cur, prev, old]))
    pdf.new_section(f"{c.name}: Consolidated Balance Sheets")
    pdf.table("bs", f"As of {D_FY} and {D_PFY}", [f"Dec 31, {FY}", f"Dec 31, {FY - 1}"],
              _bs_rows([fin.balances[D_FY], fin.balances[D_PFY]]))
    pdf.new_section(f"{c.name}: Consolidated Statements of Cash Flows")
    pdf.table("cf", "Fiscal years ended December 31", [f"FY{FY}", f"FY{FY - 1}", f"FY{FY - 2}"],
              _cf_rows([cur, prev, old]))

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
              [Q_CUR, Q_PRIOR], _is_rows([cur, prev]))
    pdf.new_section(f"{c.name}: Condensed Consolidated Balance Sheets")
    pdf.table("qbs", f"As of {D_Q} (unaudited) and {D_FY}", [f"Mar 31, {FY + 1}", f"Dec 31, {FY}"],
              _bs_rows([fin.balances[D_Q], fin.balances[D_FY]]))
    pdf.new_section(f"{c.name}: Condensed Consolidated Statements of Cash Flows")
    pdf.table("qcf", "Three months ended March 31", [Q_CUR, Q_PRIOR], _cf_rows([cur, prev]))

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


# ---- questions -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class QA:
    question: str
    answer: str
    justification: str
    anchors: tuple[str, ...]


@dataclass(frozen=True)
class Template:
    key: str
    form: str  # 10k / 10q
    question_type: str  # FinanceBench: metrics-generated / domain-relevant / novel-generated
    reasoning: str  # Information extraction / Numerical reasoning / Logical reasoning
    make: Callable[[Filing], QA]

    def two_page(self, f: Filing) -> bool:
        return len({f.anchors[a].page for a in self.make(f).anchors}) > 1


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}"


def _k_revenue(f: Filing) -> QA:
    p = f.fin.years[FY]
    return QA(f"What is the FY{FY} total revenue (in USD millions) for {f.company.name}? Answer using the "
              "consolidated statement of operations.", money(p.revenue),
              f"The metric revenue was directly extracted from the consolidated statement of operations: "
              f"Revenue = {fmt(p.revenue)}.", ("is:Revenue",))


def _k_capex(f: Filing) -> QA:
    p = f.fin.years[FY]
    return QA(f"What is the FY{FY} capital expenditure amount (in USD millions) for {f.company.name}? Give a "
              "response to the question by relying on the details shown in the cash flow statement.",
              money(p.capex), "The metric capital expenditures was directly extracted from the cash flow statement. "
              "The line item name, as seen in the 10-K, was: Purchases of property and equipment.",
              ("cf:Purchases of property and equipment",))


def _k_gross_margin(f: Filing) -> QA:
    p = f.fin.years[FY]
    v = p.gross / p.revenue * 100
    return QA(f"What is {f.company.possessive} FY{FY} gross margin? Answer in percent, rounded to one decimal place, "
              "based on the statement of operations.", pct(v),
              f"Gross margin = Gross profit / Revenue * 100 = {fmt(p.gross)} / {fmt(p.revenue)} * 100 = {pct(v)}",
              ("is:Revenue", "is:Gross profit"))


def _k_growth(f: Filing) -> QA:
    cur, prev = f.fin.years[FY], f.fin.years[FY - 1]
    v = (cur.revenue - prev.revenue) / prev.revenue * 100
    return QA(f"What is the FY{FY - 1} - FY{FY} total revenue growth rate for {f.company.name}? Answer in units of "
              "percents, rounded to one decimal place.", pct(v),
              f"Revenue growth = (FY{FY} revenue - FY{FY - 1} revenue) / FY{FY - 1} revenue * 100 = "
              f"({fmt(cur.revenue)} - {fmt(prev.revenue)}) / {fmt(prev.revenue)} * 100 = {pct(v)}", ("is:Revenue",))


def _k_current_ratio(f: Filing) -> QA:
    b = f.fin.balances[D_FY]
    return QA(f"Considering the data in the balance sheet, what is {f.company.possessive} FY{FY} current ratio? Define "
              "current ratio as total current assets divided by total current liabilities, rounded to two decimals.",
              _ratio(b.current_assets, b.current_liabilities),
              f"Current ratio = Total current assets / Total current liabilities = {fmt(b.current_assets)} / "
              f"{fmt(b.current_liabilities)} = {_ratio(b.current_assets, b.current_liabilities)}",
              ("bs:Total current assets", "bs:Total current liabilities"))


def _k_fcf(f: Filing) -> QA:
    p = f.fin.years[FY]
    return QA(f"What was {f.company.possessive} FY{FY} free cash flow in USD millions? Define free cash flow as cash "
              "from operations minus purchases of property and equipment.", money(p.cfo - p.capex),
              f"Free cash flow = Net cash provided by operating activities - Purchases of property and equipment = "
              f"{fmt(p.cfo)} - {fmt(p.capex)} = {money(p.cfo - p.capex)}",
              ("cf:Net cash provided by operating activities", "cf:Purchases of property and equipment"))


def _k_roa(f: Filing) -> QA:
    p, b = f.fin.years[FY], f.fin.balances[D_FY]
    v = p.net_income / b.total_assets * 100
    return QA(f"What is {f.company.possessive} FY{FY} return on assets, defined as net income divided by year-end "
              "total assets? Answer in percent, rounded to one decimal place.", pct(v),
              f"ROA = Net income / Total assets * 100 = {fmt(p.net_income)} / {fmt(b.total_assets)} * 100 = {pct(v)}",
              ("is:Net income", "bs:Total assets"))


def _k_capex_intensity(f: Filing) -> QA:
    p = f.fin.years[FY]
    v = p.capex / p.revenue * 100
    return QA(f"What is {f.company.possessive} FY{FY} capital expenditure as a percentage of revenue? Use the cash "
              "flow statement and the statement of operations; round to one decimal place.", pct(v),
              f"Capex intensity = Purchases of property and equipment / Revenue * 100 = {fmt(p.capex)} / "
              f"{fmt(p.revenue)} * 100 = {pct(v)}", ("cf:Purchases of property and equipment", "is:Revenue"))


def _k_operating_margin(f: Filing) -> QA:
    cur, prev = f.fin.years[FY], f.fin.years[FY - 1]
    a, b = prev.operating_income / prev.revenue * 100, cur.operating_income / cur.revenue * 100
    verdict = "Yes" if b > a else "No"
    move = "improved" if b > a else "did not improve"
    return QA(f"Did {f.company.possessive} operating margin improve from FY{FY - 1} to FY{FY}?",
              f"{verdict}, operating margin {move}: {pct(a)} in FY{FY - 1} versus {pct(b)} in FY{FY}.",
              f"Operating margin = Operating income / Revenue: FY{FY - 1} {fmt(prev.operating_income)} / "
              f"{fmt(prev.revenue)} = {pct(a)}; FY{FY} {fmt(cur.operating_income)} / {fmt(cur.revenue)} = {pct(b)}.",
              ("is:Revenue", "is:Operating income"))


def _k_segment(f: Filing) -> QA:
    segs = f.fin.segments[FY]
    top = max(segs, key=lambda s: segs[s])
    return QA(f"Which segment generated the most revenue for {f.company.name} in FY{FY}?",
              f"{top}, with {money(segs[top])} of FY{FY} revenue.",
              f"The revenue by segment table in MD&A shows {top} at {fmt(segs[top])}, the largest of "
              f"{len(segs)} segments.", (f"seg:{top}",))


def _k_employees(f: Filing) -> QA:
    return QA(f"How many full-time employees did {f.company.name} have at the end of FY{FY}?",
              f"Approximately {f.fin.employees:,} employees.",
              "The number is stated in the Human capital part of Item 1, Business.", ("biz:employees",))


def _k_tax_rate(f: Filing) -> QA:
    p = f.fin.years[FY]
    v = p.tax / p.pretax * 100
    return QA(f"What was {f.company.possessive} effective tax rate in FY{FY}? Compute it from the statement of "
              "operations, in percent rounded to one decimal place.", pct(v),
              f"Effective tax rate = Provision for income taxes / Income before income taxes * 100 = "
              f"{fmt(p.tax)} / {fmt(p.pretax)} * 100 = {pct(v)}",
              ("is:Income before income taxes", "is:Provision for income taxes"))


def _k_chart(f: Filing) -> QA:
    p = f.fin.years[FY - 2]
    return QA(f"According to the revenue chart (Figure 1) in the MD&A of {f.company.possessive} FY{FY} 10-K, what was "
              f"revenue in FY{FY - 2}?", money(p.revenue),
              f"Figure 1 shows revenue by fiscal year; the FY{FY - 2} bar is labelled {fmt(p.revenue)}.",
              ("chart", f"chart:FY{FY - 2}"))


def _k_dividend(f: Filing) -> QA:
    p = f.fin.years[FY]
    dps = round(p.dividends / p.shares, 2)
    return QA(f"Does {f.company.name} pay a dividend? If so, how much per share did it pay in FY{FY}?",
              f"Yes, ${dps:.2f} per share.", "Item 5 states the cash dividends paid per share during the year.",
              ("item5:dividend",))


def _k_debt_to_equity(f: Filing) -> QA:
    b = f.fin.balances[D_FY]
    return QA(f"What is {f.company.possessive} long-term debt to equity ratio at the end of FY{FY}? Round to two "
              "decimals.", _ratio(b.long_debt, b.equity),
              f"Long-term debt to equity = Long-term debt / Total shareholders' equity = {fmt(b.long_debt)} / "
              f"{fmt(b.equity)} = {_ratio(b.long_debt, b.equity)}",
              ("bs:Long-term debt", "bs:Total shareholders' equity"))


def _q_revenue(f: Filing) -> QA:
    p = f.fin.quarters[Q_CUR]
    return QA(f"What was {f.company.possessive} total revenue for the first quarter of {FY + 1}, in USD millions?",
              money(p.revenue), f"Revenue was directly extracted from the condensed statement of operations: "
              f"Revenue = {fmt(p.revenue)}.", ("qis:Revenue",))


def _q_growth(f: Filing) -> QA:
    cur, prev = f.fin.quarters[Q_CUR], f.fin.quarters[Q_PRIOR]
    v = (cur.revenue - prev.revenue) / prev.revenue * 100
    return QA(f"By how much did {f.company.possessive} revenue grow year over year in the first quarter of {FY + 1}? "
              "Answer in percent, rounded to one decimal place.", pct(v),
              f"Growth = ({Q_CUR} revenue - {Q_PRIOR} revenue) / {Q_PRIOR} revenue * 100 = "
              f"({fmt(cur.revenue)} - {fmt(prev.revenue)}) / {fmt(prev.revenue)} * 100 = {pct(v)}", ("qis:Revenue",))


def _q_gross_margin(f: Filing) -> QA:
    p = f.fin.quarters[Q_CUR]
    v = p.gross / p.revenue * 100
    return QA(f"What was {f.company.possessive} gross margin in the first quarter of {FY + 1}? Answer in percent, "
              "rounded to one decimal place.", pct(v),
              f"Gross margin = Gross profit / Revenue * 100 = {fmt(p.gross)} / {fmt(p.revenue)} * 100 = {pct(v)}",
              ("qis:Revenue", "qis:Gross profit"))


def _q_cash_change(f: Filing) -> QA:
    now, before = f.fin.balances[D_Q].cash, f.fin.balances[D_FY].cash
    v = (now - before) / before * 100
    return QA(f"Was there any change in {f.company.possessive} cash and cash equivalents between {D_FY} and {D_Q}? "
              "Give the change in percent, rounded to one decimal place.", pct(v),
              f"Change = (Cash at {D_Q} - Cash at {D_FY}) / Cash at {D_FY} * 100 = "
              f"({fmt(now)} - {fmt(before)}) / {fmt(before)} * 100 = {pct(v)}", ("qbs:Cash and cash equivalents",))


def _q_eps(f: Filing) -> QA:
    p = f.fin.quarters[Q_CUR]
    return QA(f"What were {f.company.possessive} diluted earnings per share for the first quarter of {FY + 1}?",
              f"${p.eps:.2f}", "Diluted earnings per share was directly extracted from the condensed statement of "
              "operations.", ("qis:Diluted earnings per share",))


def _q_cash_conversion(f: Filing) -> QA:
    p = f.fin.quarters[Q_CUR]
    return QA(f"What was {f.company.possessive} cash conversion ratio (cash from operations divided by net income) in "
              f"the first quarter of {FY + 1}? Round to two decimals.", _ratio(p.cfo, p.net_income),
              f"Cash conversion = Net cash provided by operating activities / Net income = {fmt(p.cfo)} / "
              f"{fmt(p.net_income)} = {_ratio(p.cfo, p.net_income)}",
              ("qcf:Net cash provided by operating activities", "qis:Net income"))


def _q_chart(f: Filing) -> QA:
    p = f.fin.quarters[Q_PRIOR]
    return QA(f"According to Figure 1 of {f.company.possessive} 10-Q for the first quarter of {FY + 1}, what was "
              f"revenue in the first quarter of {FY}?", money(p.revenue),
              f"Figure 1 compares first-quarter revenue; the {Q_PRIOR} bar is labelled {fmt(p.revenue)}.",
              ("qchart", f"qchart:{Q_PRIOR}"))


def _q_operating_margin(f: Filing) -> QA:
    cur, prev = f.fin.quarters[Q_CUR], f.fin.quarters[Q_PRIOR]
    a, b = prev.operating_income / prev.revenue * 100, cur.operating_income / cur.revenue * 100
    verdict, move = ("Yes", "expanded") if b > a else ("No", "did not expand")
    return QA(f"Did {f.company.possessive} operating margin expand in the first quarter of {FY + 1} compared "
              "with a year earlier?",
              f"{verdict}, operating margin {move}: {pct(a)} in {Q_PRIOR} versus {pct(b)} in {Q_CUR}.",
              f"Operating margin = Operating income / Revenue: {Q_PRIOR} {fmt(prev.operating_income)} / "
              f"{fmt(prev.revenue)} = {pct(a)}; {Q_CUR} {fmt(cur.operating_income)} / {fmt(cur.revenue)} = {pct(b)}.",
              ("qis:Revenue", "qis:Operating income"))


M, D, N = "metrics-generated", "domain-relevant", "novel-generated"
IE, NR, LR = "Information extraction", "Numerical reasoning", "Logical reasoning"
TEMPLATES: tuple[Template, ...] = (
    Template("k_revenue", "10k", M, IE, _k_revenue),
    Template("k_capex", "10k", M, IE, _k_capex),
    Template("k_gross_margin", "10k", M, NR, _k_gross_margin),
    Template("k_growth", "10k", M, NR, _k_growth),
    Template("k_current_ratio", "10k", M, NR, _k_current_ratio),
    Template("k_fcf", "10k", M, NR, _k_fcf),
    Template("k_roa", "10k", M, NR, _k_roa),  # two pages: statement of operations + balance sheet
    Template("k_capex_intensity", "10k", M, NR, _k_capex_intensity),  # two pages: cash flows + operations
    Template("k_operating_margin", "10k", D, LR, _k_operating_margin),
    Template("k_segment", "10k", D, IE, _k_segment),
    Template("k_dividend", "10k", D, IE, _k_dividend),
    Template("k_debt_to_equity", "10k", D, NR, _k_debt_to_equity),
    Template("k_employees", "10k", N, IE, _k_employees),
    Template("k_tax_rate", "10k", N, NR, _k_tax_rate),
    Template("k_chart", "10k", N, IE, _k_chart),
    Template("q_revenue", "10q", M, IE, _q_revenue),
    Template("q_growth", "10q", M, NR, _q_growth),
    Template("q_gross_margin", "10q", M, NR, _q_gross_margin),
    Template("q_eps", "10q", M, IE, _q_eps),
    Template("q_cash_conversion", "10q", D, NR, _q_cash_conversion),  # two pages: cash flows + operations
    Template("q_operating_margin", "10q", D, LR, _q_operating_margin),
    Template("q_cash_change", "10q", N, NR, _q_cash_change),
    Template("q_chart", "10q", N, IE, _q_chart),
)
# FinanceBench numbers its domain-relevant questions dg01..; ours get their own numbers, stable per template
DOMAIN_NUMBERS = {t.key: f"dg{i + 1:02d}" for i, t in enumerate(x for x in TEMPLATES if x.question_type == D)}


def pick_templates(f: Filing, n: int, rng: random.Random) -> list[Template]:
    """n templates for a filing, always including a two-page question when one exists."""
    pool = [t for t in TEMPLATES if t.form == f.doc_type]
    chosen = rng.sample(pool, min(n, len(pool)))
    two = [t for t in pool if t.two_page(f)]
    if n and two and not any(t in two for t in chosen):
        chosen[-1] = rng.choice(two)
    return chosen


def evidence_items(f: Filing, qa: QA) -> list[dict[str, object]]:
    """One evidence item per gold page, its evidence_text the anchored rows/sentences on that page."""
    by_page: dict[int, list[str]] = {}
    for key in qa.anchors:
        a = f.anchors[key]
        by_page.setdefault(a.page, []).append(a.text)
    return [
        {"evidence_text": "\n".join(texts), "doc_name": f.doc_name, "evidence_page_num": page,
         "evidence_text_full_page": f.page_texts[page]}
        for page, texts in by_page.items()
    ]


# ---- the job -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SynthResult:
    documents: int
    pages: int
    questions: int
    two_page_questions: int


def _write_bytes(path: Path, data: bytes) -> None:
    # write to a temp name and rename, so an interrupted run never leaves a truncated file behind
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def synthesize(out: Path, seed: int = 0, companies: int = 6, questions_per_doc: int = 5) -> SynthResult:
    if not 1 <= companies <= len(COMPANIES):
        raise InputError(f"--companies must be between 1 and {len(COMPANIES)}, got {companies}", field="companies")
    if questions_per_doc < 0:
        raise InputError(f"--questions-per-doc must be >= 0, got {questions_per_doc}", field="questions_per_doc")
    rng = random.Random(seed)
    profiles = rng.sample(COMPANIES, companies)
    filings: list[Filing] = []
    for c in progress(profiles, desc="synth filings", unit="company"):
        # one generator per company, derived from the seed: adding companies does not change the others' numbers
        crng = random.Random(f"{seed}:{c.code}")
        fin = make_financials(c, crng)
        filings += [build_10k(c, fin, crng), build_10q(c, fin, crng)]

    questions: list[dict[str, object]] = []
    qrng = random.Random(f"{seed}:questions")
    for f in filings:
        for t in pick_templates(f, questions_per_doc, qrng):
            qa = t.make(f)
            questions.append({
                "financebench_id": f"finrag_synth_{seed}_{len(questions) + 1:05d}",
                "company": f.company.name,
                "doc_name": f.doc_name,
                "question_type": t.question_type,
                "question_reasoning": t.reasoning,
                "domain_question_num": DOMAIN_NUMBERS.get(t.key),
                "question": qa.question,
                "answer": qa.answer,
                "justification": qa.justification,
                "dataset_subset_label": "SYNTHETIC",
                "evidence": evidence_items(f, qa),
            })
    documents = [
        {"doc_name": f.doc_name, "company": f.company.name, "gics_sector": f.company.sector, "doc_type": f.doc_type,
         "doc_period": FY if f.doc_type == "10k" else FY + 1, "doc_link": f"pdfs/{f.doc_name}.pdf"}
        for f in filings
    ]
    (out / "pdfs").mkdir(parents=True, exist_ok=True)
    for f in filings:
        _write_bytes(out / "pdfs" / f"{f.doc_name}.pdf", f.pdf_bytes)
    _write_bytes(out / "documents.jsonl", "".join(json.dumps(d) + "\n" for d in documents).encode())
    _write_bytes(out / "questions.jsonl", "".join(json.dumps(q) + "\n" for q in questions).encode())
    return SynthResult(
        documents=len(filings),
        pages=sum(len(f.page_texts) for f in filings),
        questions=len(questions),
        two_page_questions=sum(1 for q in questions if len(q["evidence"]) > 1),  # type: ignore[arg-type]
    )
