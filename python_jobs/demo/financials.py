"""The synthetic corpus's numbers: the fictional companies and their financial statements.

Each company gets three fiscal years and two first quarters whose figures are internally consistent (gross profit =
revenue - cost of revenue, total assets = total liabilities + equity, the cash flow statement rolls the balance
sheet's cash forward, the 10-Q's December 31 column equals the 10-K's); filings.py draws them, questions.py asks
about them.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

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

