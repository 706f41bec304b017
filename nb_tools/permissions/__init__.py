"""Permission rules: allow / ask / deny with argument specifiers, from Python, magics,
the approval card's "Always allow", and settings files."""

from nb_tools.permissions._narrow import narrowest_rule
from nb_tools.permissions._rules import (
    Action,
    PermissionRules,
    Rule,
    RuleMatch,
    load_rules,
    parse_rule,
    project_settings_path,
    user_settings_path,
)

__all__ = [
    "Action",
    "PermissionRules",
    "Rule",
    "RuleMatch",
    "load_rules",
    "narrowest_rule",
    "parse_rule",
    "project_settings_path",
    "user_settings_path",
]
