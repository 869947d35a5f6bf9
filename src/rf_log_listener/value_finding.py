"""Which values of a run's texts are secrets, found to be registered (shared by both
sides: the capture side's writer and an import register them, ``registry``; the read side
masks them wherever the run shows them, ``known_values``). ``ValueFinding`` is mixed into
``masking.Redactor``: it reads the redactor's patterns of a secret's name, so what a rule
masks is what this registers; the shapes with their own patterns are asked here too
(``secret_shapes``, ``gated_shapes``, ``argument_passwords``, ``named_values``).
"""

from __future__ import annotations

from rf_log_listener.argument_passwords import argument_password_spans, argument_passwords
from rf_log_listener.gated_shapes import gated_secrets
from rf_log_listener.known_values import registrable
from rf_log_listener.named_values import (
    LIBRARY_MESSAGES,
    auth_parameters_at,
    block_scalar,
    collection_items,
    compared_side,
    environment_value,
    holds_no_secret,
    in_url_user,
    may_compare,
    prompt_string,
    setter_call,
    structured_secrets,
    unquoted,
    whole_name,
)
from rf_log_listener.secret_names import no_value_at
from rf_log_listener.secret_shapes import (
    command_passwords,
    compiled_shapes,
    curl_credentials,
    piped_passwords,
    prose_passwords,
    secret_options,
    secure_strings,
    sql_passwords,
    typed_password,
)

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    import re


class ValueFinding:
    """The values a text's secrets have, and the writer's cheap check that it may hold one."""

    if TYPE_CHECKING:  # what masking.Redactor gives the methods below
        _named_value: re.Pattern[str]
        _named_value_backwards: re.Pattern[str] | None
        _name_value_pair: re.Pattern[str]
        _plural_collection: re.Pattern[str]
        _compared_values: re.Pattern[str]
        _xml_element: re.Pattern[str]
        _xml_named_text: re.Pattern[str]
        def _holds_plural(self, text: str, lowered: str | None = None) -> bool: ...
        def names_secret(self, text: str) -> bool: ...

    def may_name_a_value(self, text: str, lowered: str) -> bool:
        """Whether :meth:`secret_values` can find anything in ``text`` (lower-cased as
        ``lowered``): a secret's name and a separator (or a name-value pair's), a
        secret-named XML element, URL or curl credentials, a shape a rule reads."""
        if ":" in text or "=" in text:  # the name rules, URL and curl credentials need one
            backwards = self._named_value_backwards
            if backwards is None:
                named = self._named_value.search(lowered) is not None
            else:
                named = backwards.search(lowered[::-1]) is not None
            if named or ("://" in text and "@" in text) or (
                    "curl" in lowered and curl_credentials(text)):
                return True
            value_key = "value" in lowered  # a pair's value key (``"value":``, ``-Value``)
        else:  # without a separator, only PowerShell's ``-Name x -Value y``
            value_key = " -value" in lowered
        # a name-value pair, or a setter's call (``localStorage.setItem('token', 'x')``); "("
        # asked here first: the call of setter_call alone cost every message ~0.05-0.1 µs
        if (value_key or ("(" in text and setter_call(text, lowered))) and \
                self._name_value_pair.search(text) is not None:
            return True
        # each shape's own substring first: this runs on every message the writer sees (a
        # command's options, sudo's -S and --password-stdin follow " -"; a kinit line holds none)
        if ((" -" in text or text[:1] == "-") and (
                command_passwords(text, lowered) or secret_options(text, lowered))) or (
                secure_strings(text, lowered)) or (
                (" -" in text or "kinit" in lowered) and piped_passwords(text)) or (
                "pass:" in text and command_passwords(text, lowered)) or (
                ("identified" in lowered or "password" in lowered) and sql_passwords(text, lowered)) or (
                gated_secrets(text, lowered)) or (
                text.startswith(LIBRARY_MESSAGES) and (typed_password(text) or (
                    environment_value(text, self.names_secret) is not None))) or (
                argument_password_spans(text)):
            return True
        if "</" in text and (self._xml_element.search(text) or self._xml_named_text.search(text)):
            return True
        if may_compare(text) and self._compared_values.search(text) is not None:
            return True
        return "pass" in lowered and bool(prose_passwords(text, lowered))

    def secret_values(self, text: str, lowered: str | None = None) -> list[str]:
        """The values that follow a secret's name in ``text`` (``password=x``, ``"token":
        "x"``, ``Authorization: Bearer x``, ``${API_KEY} = x``, to the end of the line), URL
        and curl credentials and secret-named XML elements' texts, unquoted: what becomes a
        run's known value. Found from each mention of a secret word onwards, not by the
        masking rules' scan of every position: the writer runs this on every message that
        mentions one. Self-describing shapes (private keys, JWTs, vendor tokens, webhook
        URLs) are masked wherever they occur and need no registering."""
        found = []
        lowered = text.lower() if lowered is None else lowered
        if len(lowered) == len(text):  # else positions would shift: no name to follow
            for mention in self._named_value.finditer(lowered):
                if mention["plural"]:  # a collection's values: below; `tokens=4` counts
                    continue
                after = compiled_shapes().after_name.match(text, mention.end("name"))
                if after is None:
                    continue
                value, close, start = after["value"], after["close"] or "", after.start("value")
                # RF's assignment line (``${token} =``, ``${creds}[token] =``): to its end
                line = close == "}" or (after["item"] and not close and _rf_item(text, mention.end("name")))
                end = text.find("\n", start) if line else after.end("value")
                end = len(text) if end < 0 else end
                if no_value_at(text, start, end):
                    continue
                if line:
                    value = text[start:end]
                elif after["block"]:  # password: | then its lines
                    value = block_scalar(value, after["block"], after["indent"])
                elif after["bs"]:  # \"token\": \"x\": JSON in a string (not cut before its end)
                    closed = len(value) >= 2 * len(close) and value.endswith(close)
                    value = value[len(close):-len(close)] if closed else ""
                elif (bare := unquoted(value)) != value:
                    value = bare
                elif "@" in value and in_url_user(text, mention.start("name")):
                    value = value[:value.index("@")]
                name = whole_name(lowered, mention)
                if holds_no_secret(name, value) or prompt_string(text, mention.end("name") - len(name),
                                                                 after):
                    continue  # the shell's PWD=/path, a network's ssid=x; expect "password:"
                if name.endswith("cookie") and "=" in value:  # a cookie's name stays: "sid=" of an
                    value = value.partition("=")[2]  # emptied one was masked wherever it stood
                if name.endswith("authorization") and auth_parameters_at(text, start):
                    continue
                found += structured_secrets(name, value.strip())
        if self._holds_plural(text, lowered):  # api_keys=['a', 'b'], @{TOKENS} = [ a | b ]
            for match in self._plural_collection.finditer(text):
                if not self.names_secret(match["key"]):  # credentials=(user, x): a pair's
                    found += collection_items(match["value"])
        if may_compare(text):  # Key password: a != b
            found += [compared_side(m[side]) for m in self._compared_values.finditer(text)
                      for side in ("first", "second")]
        if "://" in text and "@" in text:
            found += [m[2] for m in compiled_shapes().url_credentials.finditer(text)]
        if "</" in text:
            found += [m["value"] for m in self._xml_element.finditer(text)
                      if not no_value_at(text, *m.span("value"))]
            found += [m["value"] for m in self._xml_named_text.finditer(text)
                      if not (holds_no_secret(m["key"], m["value"]) or no_value_at(text, *m.span("value")))]
        if "value" in lowered or setter_call(text, lowered):
            found += [unquoted(m["value"]) for m in self._name_value_pair.finditer(text)
                      if not (holds_no_secret(m["key"], m["value"]) or no_value_at(text, *m.span("value")))]
        if "curl" in lowered:
            found += curl_credentials(text)
        found += command_passwords(text, lowered)
        found += sql_passwords(text, lowered)
        found += gated_secrets(text, lowered)
        found += piped_passwords(text)
        found += secure_strings(text, lowered)
        found += argument_passwords(text)
        if " -" in text or text.startswith("-"):
            found += secret_options(text, lowered)
        for span in (typed_password(text), environment_value(text, self.names_secret)):
            if span is not None:
                found.append(text[span[0]:span[1]])
        # prose ends a password at a sentence's stop; a rule above may read it whole (a
        # .netrc's "password x!"): then the cut copy is no value of its own
        found += [cut for cut in prose_passwords(text, lowered)
                  if not any(v.startswith(cut) and not v[len(cut):].strip("!?.,;:") for v in found)]
        return [value for value in found if registrable(value)]


def _rf_item(text: str, end: int) -> bool:
    """Whether the name ending at ``end`` is an RF variable's item (``${creds}[token]``)."""
    start = text.rfind("[", 0, end)
    return start > 0 and text[start - 1] == "}" and "\n" not in text[start:end]
