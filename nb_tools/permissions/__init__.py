"""Permission rules: allow / ask / deny with argument specifiers, from Python, magics,
the approval card's "Always allow", and settings files."""

from nb_tools.permissions._hosts import HostError, normalise_host, url_host
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
from nb_tools.permissions._shell import Redirect, SimpleCommand, parse_script

__all__ = [
    "Action",
    "HostError",
    "PermissionRules",
    "Redirect",
    "Rule",
    "RuleMatch",
    "SimpleCommand",
    "load_rules",
    "narrowest_rule",
    "normalise_host",
    "parse_rule",
    "parse_script",
    "project_settings_path",
    "url_host",
    "user_settings_path",
]
