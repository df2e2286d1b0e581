"""`finrag topics flatten`: turn a topic tree (OmniEval's `{"topic_name", "sub_topics"}` JSON) into the flat seed
`seeds/omnieval_topics.csv`: one row per node at every level, Chinese names kept, English names added."""

from __future__ import annotations

from python_jobs.core.errors import InputError

# English names for OmniEval's topic tree, written by the project.
ENGLISH = {
    "金融": "Finance",
    "银行业务": "Banking", "零售银行": "Retail banking", "储蓄账户": "Savings accounts",
    "支票账户": "Checking accounts", "信用卡": "Credit cards", "个人贷款": "Personal loans",
    "商业银行": "Commercial banking", "商业贷款": "Commercial loans", "资产管理": "Asset management",
    "贸易融资": "Trade finance", "企业账户": "Corporate accounts",
    "投资银行": "Investment banking", "并购咨询": "M&A advisory", "资本市场": "Capital markets",
    "财务顾问": "Financial advisory", "风险管理": "Risk management",
    "投资": "Investment", "股票市场": "Stock market", "股票交易": "Stock trading", "股票分析": "Stock analysis",
    "IPO": "IPO", "债券市场": "Bond market", "政府债券": "Government bonds", "企业债券": "Corporate bonds",
    "债券交易": "Bond trading", "基金": "Funds", "共同基金": "Mutual funds",
    "交易所交易基金（ETF）": "Exchange-traded funds (ETF)", "对冲基金": "Hedge funds",
    "衍生品市场": "Derivatives market", "期货": "Futures", "期权": "Options", "掉期": "Swaps",
    "保险": "Insurance", "人寿保险": "Life insurance", "财产保险": "Property insurance", "健康保险": "Health insurance",
    "金融科技": "Fintech", "区块链": "Blockchain", "人工智能": "Artificial intelligence", "大数据": "Big data",
    "监管与合规": "Regulation and compliance", "反洗钱（AML）": "Anti-money laundering (AML)",
    "合规审计": "Compliance audit", "监管报告": "Regulatory reporting",
}

MAX_LEVELS = 3  # levels below the root in OmniEval's tree
COLUMNS = ["topic_id", "level", "name_zh", "name_en", "parent_topic_id", "is_leaf",
           *[f"l{i}_{lang}" for i in range(1, MAX_LEVELS + 1) for lang in ("zh", "en")]]


def flatten(tree: dict, english: dict[str, str] | None = None, source: str = "<tree>") -> list[dict[str, object]]:
    english = ENGLISH if english is None else english
    rows: list[dict[str, object]] = []

    def walk(node: dict, path: list[str], where: str) -> None:
        if not isinstance(node, dict) or not isinstance(node.get("topic_name"), str):
            raise InputError("node without a string topic_name", file=source, field=f"{where}.topic_name")
        name = node["topic_name"]
        here = [*path, name]
        level = len(here) - 1  # the root is level 0
        if level > MAX_LEVELS:
            raise InputError(f"tree deeper than {MAX_LEVELS} levels below the root", file=source, field=where)
        subs = node.get("sub_topics") or []
        row: dict[str, object] = {
            # ids are the path below the root, as questions' topic_path holds it; the root is its own name
            "topic_id": "/".join(here[1:]) or name,
            "level": level,
            "name_zh": name,
            "name_en": english.get(name, name),
            "parent_topic_id": ("/".join(path[1:]) or path[0]) if path else "",
            "is_leaf": not subs,
        }
        for i in range(1, MAX_LEVELS + 1):
            seg = here[i] if i < len(here) else ""
            row[f"l{i}_zh"], row[f"l{i}_en"] = seg, english.get(seg, seg)
        rows.append(row)
        for j, sub in enumerate(subs):
            walk(sub, here, f"{where}.sub_topics[{j}]")

    walk(tree, [], "$")
    return rows
