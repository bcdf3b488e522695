"""ssl.principal.mapping.rules: a client certificate's subject to a principal name.

Kafka's SslPrincipalMapper, rule for rule. The setting is a comma-separated list, tried
in order; the first rule whose pattern matches the whole distinguished name gives the
name:

    RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1/L     CN=Alice,OU=course,O=minikafka -> alice
    DEFAULT                                   the whole DN, unchanged

A rule's pattern is a Java regular expression, its replacement uses $1, $2 for groups
(a $n past the last group is kept literally), and /L or /U lower- or upper-cases the
result. When no rule matches, Kafka refuses the connection ("No rules apply to ...").

    >>> SslPrincipalMapper("RULE:^CN=(.*?),OU=.*$/$1/U, DEFAULT").name("CN=bob,OU=ops")
    'BOB'
"""
from __future__ import annotations

import re

__all__ = ["DEFAULT_RULES", "NoMatchingRule", "SslPrincipalMapper"]

DEFAULT_RULES = "DEFAULT"

# Kafka's RULE_PATTERN, as written in SslPrincipalMapper.java.
_RULE = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)")
_PARSER = re.compile(_RULE)
_BACK_REFERENCE = re.compile(r"\$(\d+)|\\(.)", re.DOTALL)


class NoMatchingRule(ValueError):
    """No rule maps this distinguished name: Kafka closes the connection."""


class _Rule:
    def __init__(self, pattern: str | None = None, replacement: str = "",
                 case: str = "") -> None:
        self.pattern = None if pattern is None else re.compile(pattern)
        self.replacement = replacement
        self.case = case

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:  # DEFAULT
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        result = self.pattern.sub(self._expand, dn)  # Java's replaceAll
        return result.lower() if self.case == "L" else result.upper() if self.case == "U" \
            else result

    def _expand(self, match: re.Match[str]) -> str:
        """Java's Matcher replacement: $n is group n, \\x is x; as Kafka escapes them, a
        $n past the last group is literal (a longer number first loses its last digits)."""
        groups = self.pattern.groups if self.pattern is not None else 0

        def one(ref: re.Match[str]) -> str:
            if ref.group(2) is not None:
                return ref.group(2)
            digits = ref.group(1)
            if groups == 0:
                return str(match.group(int(digits[0]))) + digits[1:] if digits[0] == "0" \
                    else _no_group(digits)
            index, rest = int(digits), ""
            while index > groups and index >= 10:
                index, rest = index // 10, str(index % 10) + rest
            if index > groups:
                return "$" + digits
            return (match.group(index) or "") + rest
        return _BACK_REFERENCE.sub(one, self.replacement)

    def __repr__(self) -> str:
        if self.pattern is None:
            return "DEFAULT"
        case = f"/{self.case}" if self.case else ""
        return f"RULE:{self.pattern.pattern}/{self.replacement}{case}"


def _no_group(digits: str) -> str:
    # Without capturing groups Kafka leaves the replacement as it is, and Java then fails
    # on "$1": "No group 1".
    raise NoMatchingRule(f"No group {digits[0]}")


class SslPrincipalMapper:
    """The rules of one ssl.principal.mapping.rules value; ValueError ("Invalid rule: ...")
    for a value Kafka refuses at start-up."""

    def __init__(self, rules: str | None = DEFAULT_RULES) -> None:
        text = DEFAULT_RULES if rules is None else rules
        self.rules: list[_Rule] = []
        for found in _SPLITTER.finditer(text.strip()):
            rule = found.group(1)
            parsed = _PARSER.match(rule)
            if parsed is None:
                raise ValueError(f"Invalid rule: {rule}")
            if parsed.end() != len(rule):
                raise ValueError(f"Invalid rule: `{rule}`, unmatched substring: "
                                 f"`{rule[parsed.end():]}`")
            if parsed.group(1) is not None:
                self.rules.append(_Rule())
            elif parsed.group(2) is not None:
                try:
                    self.rules.append(_Rule(parsed.group(2), parsed.group(4), parsed.group(6)))
                except re.error as exc:
                    raise ValueError(f"Invalid rule: {rule} ({exc})") from None

    def name(self, dn: str) -> str:
        """The principal's name for subject `dn` (NoMatchingRule if no rule applies)."""
        for rule in self.rules:
            found = rule.apply(dn)
            if found is not None:
                return found
        raise NoMatchingRule(f"No rules apply to {dn}, rules {self.rules}")

    def __repr__(self) -> str:
        return f"SslPrincipalMapper(rules = {self.rules})"
