# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API server's naming rules, for every value that reaches kubectl's argv.

A value that fails here never reaches kubectl: a Node name that starts with
``-`` would be read as a flag (``kubectl drain -l gpu=true`` drains every
Node that matches), one with a ``/`` or a ``,`` names another object or
several. Each function returns the list of what is wrong (empty: valid), in
the API server's words.

Sources: k8s.io/apimachinery pkg/util/validation/validation.go
(IsDNS1123Subdomain, IsDNS1123Label, IsQualifiedName, IsValidLabelValue) and
pkg/labels/selector.go (Parse: the label selector grammar of
``--selector``/``--pod-selector``); Node names are DNS-1123 subdomains
(pkg/apis/core/validation ValidateNodeName), namespaces DNS-1123 labels.
"""

from __future__ import annotations

import re

# a qualified name's name part and a label value
_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc')")
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character (e.g. 'example.com')")
_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
              "and end with an alphanumeric character (e.g. 'my-name', or '123-abc')")
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
              "must start and end with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345')")
DNS1123_SUBDOMAIN_MAX = 253
DNS1123_LABEL_MAX = 63


def _text_errors(value):
    if not isinstance(value, str):
        return ["must be a string, not %s" % type(value).__name__]
    if not value:
        return ["must not be empty"]
    return []


def _dns1123_errors(value, pattern, longest, message):
    errors = _text_errors(value)
    if errors:
        return errors
    if len(value) > longest:
        errors.append("must be no more than %d characters" % longest)
    if not pattern.fullmatch(value):
        errors.append(message)
    return errors


def dns1123_subdomain_errors(value):
    """IsDNS1123Subdomain: the form of a Node's (and most objects') name."""
    return _dns1123_errors(value, _DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MAX, _SUBDOMAIN_MSG)


def dns1123_label_errors(value):
    """IsDNS1123Label: the form of a namespace's name."""
    return _dns1123_errors(value, _DNS1123_LABEL, DNS1123_LABEL_MAX, _LABEL_MSG)


def qualified_name_errors(key):
    """IsQualifiedName: optional DNS-1123 subdomain prefix (<= 253) + '/' + name (<= 63): label and annotation keys."""
    if not isinstance(key, str):
        return ["must be a string, not %s" % type(key).__name__]
    errors = []
    parts = key.split("/")
    if len(parts) == 1:
        prefix, name = None, parts[0]
    elif len(parts) == 2:
        prefix, name = parts
    else:
        return ["a qualified name %s with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')" % _NAME_MSG]
    if prefix is not None:
        if not prefix:
            errors.append("prefix part must be non-empty")
        elif len(prefix) > DNS1123_SUBDOMAIN_MAX:
            errors.append("prefix part must be no more than %d characters" % DNS1123_SUBDOMAIN_MAX)
        elif not _DNS1123_SUBDOMAIN.fullmatch(prefix):
            errors.append("prefix part " + _SUBDOMAIN_MSG)
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if name and not _NAME.fullmatch(name):
        errors.append("name part %s" % _NAME_MSG)
    return errors


def label_value_errors(value):
    """IsValidLabelValue: empty, or <= 63 characters of the name charset."""
    if not isinstance(value, str):
        return ["must be a string, not %s" % type(value).__name__]
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if value and not _NAME.fullmatch(value):
        errors.append(_VALUE_MSG)
    return errors


# labels.Parse's lexer: these characters end an identifier; whitespace separates tokens.
_SPECIAL = "!=,()<>"
_TOKEN = re.compile(r"\s*(!=|==|=|!|,|\(|\)|<|>|[^\s!=,()<>]+)")
_SET_OPS = ("in", "notin")


def _tokens(text):
    out, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:   # only trailing whitespace is left
            break
        out.append(match.group(1))
        pos = match.end()
    return out


def label_selector_errors(text):
    """labels.Parse: ``key``, ``!key``, ``key=v``, ``key==v``, ``key!=v``, ``key in (a,b)``, ``key notin (a,b)``,
    ``key>1``, ``key<1``, separated by commas; keys are qualified names, values label values."""
    errors = _text_errors(text)
    if errors:
        return errors
    tokens, i, out = _tokens(text), 0, []

    def key_errors(key):
        return ["key %r: %s" % (key, e) for e in qualified_name_errors(key)]

    def value_errors(value):
        return ["value %r: %s" % (value, e) for e in label_value_errors(value)]

    def is_ident(tok):
        return tok is not None and tok[0] not in _SPECIAL

    def at(k):
        return tokens[k] if k < len(tokens) else None

    while True:
        tok = at(i)
        if tok == "!":
            key = at(i + 1)
            if not is_ident(key):
                return out + ["found %r, expected: identifier after '!'" % (key or "end of string")]
            out += key_errors(key)
            i += 2
        elif is_ident(tok):
            out += key_errors(tok)
            op = at(i + 1)
            i += 1
            if op in ("=", "==", "!="):
                value = at(i + 1)
                if is_ident(value):
                    out += value_errors(value)
                    i += 2
                else:   # key= : the empty value
                    i += 1
            elif op in ("<", ">"):
                value = at(i + 1)
                if not is_ident(value) or not re.fullmatch(r"-?[0-9]+", value):
                    return out + ["for 'Gt', 'Lt' operators, the value must be an integer, not %r" % (value or "")]
                i += 2
            elif op in _SET_OPS:
                if at(i + 1) != "(":
                    return out + ["found %r, expected: '(' after %s" % (at(i + 1) or "end of string", op)]
                i += 2
                if at(i) == ")":
                    return out + ["for 'in', 'notin' operators, values set can't be empty"]
                while True:
                    value = at(i)
                    if is_ident(value):
                        out += value_errors(value)
                        i += 1
                        value = at(i)
                    if value == ")":
                        i += 1
                        break
                    if value != ",":
                        return out + ["found %r, expected: ',' or ')' in the values of %s" % (value or "end of string", op)]
                    i += 1
            elif op not in (None, ","):
                return out + ["found %r, expected: in, notin, =, ==, !=, gt, lt" % op]
        else:
            return out + ["found %r, expected: !, identifier, or 'end of string'" % (tok or "end of string")]
        tok = at(i)
        if tok is None:
            return out
        if tok != ",":
            return out + ["found %r, expected: ',' or 'end of string'" % tok]
        i += 1
