"""The question templates: FinanceBench-style questions asked of a filing's numbers, each citing the anchored rows
or sentences its answer comes from, so every question's gold pages are known."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from python_jobs.demo.filings import Filing
from python_jobs.demo.financials import D_FY, D_Q, FY, Q_CUR, Q_PRIOR, fmt, money, pct


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

