"""Secrets in a few tools' and protocols' own shapes, each looked for only where its own
substrings are. Shared by both sides: masking (``Redactor.text``), the registry
(``Redactor.secret_values``) and the writer's check of every message (``may_name_a_value``)
read the same table, so what one masks the others register.

A row's pattern has the groups ``head`` (shown) and ``value`` (masked, registered). A text
is searched with it only when it holds one of the row's marks (lower-cased substrings) and
its ``needs`` character: an ``in`` test costs well under a microsecond, a search of every
message several. The row's ``trigger`` marks are what ``Redactor``'s trigger scan looks for
(characters and classes, ``secret_names.name_steps``): a text without any is not searched
by any rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .secret_shapes import (
    PIPED_HEAD,
    PIPED_VALUE,
    found_in_context,
    lazy_pattern,
    masked_in_context,
    password_field,
)


class GatedShape:
    """One row: a plain class, as ``dataclasses`` (and ``inspect`` under it) would be more
    than a reading command imports otherwise (``tests/test_cli_imports.py``)."""

    __slots__ = ("marks", "needs", "trigger", "pattern", "holds")

    def __init__(self, marks: tuple[str, ...], needs: str, trigger: tuple[str, ...],
                 pattern: Callable[[], re.Pattern[str]],
                 holds: Callable[[re.Match[str]], bool] = lambda match: True) -> None:
        self.marks = marks  # lower-cased substrings: the text holds one, or is not searched
        self.needs = needs  # a character the text holds too ("" for none)
        self.trigger = trigger  # the marks as the trigger scan looks for them
        self.pattern = pattern  # compiled at first use; groups head and value
        self.holds = holds  # whether a match's value is a secret (by default every match's)

    def values(self, text: str) -> list[str]:
        return found_in_context(self.pattern(), text, self.holds)

    def masked(self, match: re.Match[str]) -> str:
        return masked_in_context(match, self.holds)

    def may_hold(self, text: str, lowered: str) -> bool:
        return (not self.needs or self.needs in text) and any(map(lowered.__contains__, self.marks))


_WINDOWS_TOOLS = ("cmdkey", "winrs", "schtasks", "freerdp")  # also asked by ``may_hold_any``
# Which tool takes each option: the command before it (to a line's end, ``;``, ``|`` or
# ``&``) names one
_TOOLS_OF_OPTION = {"/pass:": ("cmdkey",), "-p:": ("winrs",), "-password:": ("winrs",),
                    "/password:": ("winrs",), "/p:": ("winrs", "freerdp"), "/gp:": ("freerdp",),
                    "/p": ("schtasks",), "/rp": ("schtasks",)}


def _on_its_tool(match: re.Match[str]) -> bool:
    """Whether ``match``'s option follows, in its command (300 characters at most), a tool
    that takes it so (its value "*" asks for the password)."""
    if match["value"] == "*":
        return False
    option = match["option"].rstrip(" \t").lower()
    before = match.string[max(0, match.start() - 300):match.start()]
    before = before[max(before.rfind(end) for end in "\n;|&") + 1:].lower()
    return any(tool in before for tool in _TOOLS_OF_OPTION.get(option, ()))


_ORACLE_TOOLS = ("sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl")
_ORACLE_MARKS = ("jdbc:oracle:", "conn", *_ORACLE_TOOLS)  # also asked by ``may_hold_any``
# A value: quoted (to its quote, on its line), or to a blank, a quote or what ends a command
_VALUE = r"""(?P<value>(?(q)[^'"\n]+|[^\s'";|&]+))"""

GATED_SHAPES = (
    # Oracle's user/password@database in a JDBC URL (thin, OCI), on its tools' command
    # lines (``sqlplus -s scott/x@orcl``, ``expdp userid=scott/x``, ``rman target
    # sys/x@db``) and in SQL*Plus' CONNECT (``SQL> connect scott/x@orcl``, ``conn sys/x as
    # sysdba``: a database or a role after it): the password; the user and the database
    # stay. The trigger takes each tool's name with the blank it needs after it:
    # "performance" holds "rman".
    GatedShape(
        _ORACLE_MARKS, "/",
        ("jdbc:oracle:", "conn[ \t]", "connect[ \t]", *(f"{tool}[ \t]" for tool in _ORACLE_TOOLS)),
        lazy_pattern(
            r"""(?i)(?P<head>(?:\bjdbc:oracle:(?:thin|oci8?):|\b(?:""" + "|".join(_ORACLE_TOOLS)
            + r""")(?:[ \t]+(?:-\w+|target|catalog|auxiliary))*[ \t]+(?:\w+=)?['"]?"""
            r"""|\b(?P<connect>conn(?:ect)?)[ \t]+)[\w$#.-]+/)"""
            r"""(?P<value>[^\s@/'"]+)(?(connect)(?=@|[ \t]+as[ \t]+sys)|(?=[@'"\s]|$))""")),
    # Redis's password: its configuration's ``requirepass x`` and ``masterauth x`` (a line of
    # redis.conf, which the value ends: "requirepass is not set" stays; ``CONFIG SET
    # requirepass x``; ``redis-server --requirepass x``), and the AUTH command (``AUTH x``,
    # ``AUTH user x``) on a redis-cli command line or after its prompt (``127.0.0.1:6379>
    # AUTH x``); redis-cli's ``-a x`` is a password option (``secret_shapes``)
    GatedShape(
        ("requirepass", "masterauth", "redis-cli", "> auth"), "",
        ("requirepass[ \t]", "masterauth[ \t]", "redis-cli", ">[ \t]auth[ \t]"),
        lazy_pattern(
            r"""(?im)(?P<head>(?:(?:(?P<line>^[ \t]*)|\bconfig[ \t]+set[ \t]+|(?<![\w-])--)"""
            r"""(?:requirepass|masterauth)[ \t]+"""
            r"""|(?:\bredis-cli\b[^\n;|&]{0,300}?[ \t]|^[ \t]*[\w.-]*(?::\d+)?(?:\[\d+\])?>[ \t]*)"""
            r"""AUTH[ \t]+(?:[^\s'"]+[ \t]+(?=[^\s]))?)(?P<q>['"])?)""" + _VALUE
            + r"""(?(line)(?=(?(q)['"])[ \t]*$))""")),  # redis.conf's line: the value ends it
    # a user's credentials after an ``-auth``/``--auth`` option (Jenkins' CLI ``-auth
    # user:token``, HTTPie's ``--auth user:password``): the part after the colon; ``-auth
    # @file`` reads them from a file
    GatedShape(
        ("-auth",), ":", ("-auth[ \t=]",),
        lazy_pattern(
            r"""(?P<head>(?<![\w-])--?auth(?:[ \t]+|=)(?P<q>['"])?[^\s:'"@]+:)""" + _VALUE)),
    # ``user:password`` lines chpasswd reads from its standard input (``echo 'bob:x' |
    # sudo chpasswd``, ``printf 'bob:x\n' | chpasswd``, ``chpasswd <<< 'bob:x'``): the password
    GatedShape(
        ("chpasswd",), ":", ("chpasswd",),
        lazy_pattern(
            r"""(?P<head>(?:""" + PIPED_HEAD + r"""(?=['"]?[^\s:'"]+:[^\n|]*\|[ \t]*"""
            r"""(?:sudo[ \t]+(?:-\w+[ \t]+)*)?chpasswd\b)|\bchpasswd[ \t]*<<<[ \t]*)(?P<q>['"])?[^\s:'"]+:)"""
            + PIPED_VALUE)),
    # a password on a Windows command line: the credential manager's (``cmdkey /add:host
    # /user:bob /pass:x``; ``/pass`` alone asks for it), Windows Remote Shell's (``winrs
    # -r:host -u:bob -p:x cmd``), a scheduled task's (``schtasks /create ... /ru bob /rp x``,
    # the remote user's ``/p x``), FreeRDP's (``xfreerdp /v:host /u:bob /p:x``, its
    # gateway's ``/gp:x``): each option where its tool runs the command (``_on_its_tool``)
    GatedShape(
        _WINDOWS_TOOLS, "", _WINDOWS_TOOLS,
        lazy_pattern(
            r"""(?i)(?P<head>(?<=[ \t])(?P<option>/pass:|[-/]p(?:assword)?:|/r?p[ \t]+|/gp:)"""
            r"""(?P<q>['"])?)""" + _VALUE),
        _on_its_tool),
    # lftp's user and password given together (``lftp -u bob,x sftp://host``, also in its
    # script, ``lftp -e "open -u bob,x host"``): the part after the comma
    GatedShape(
        ("lftp",), ",", ("lftp",),
        lazy_pattern(
            r"""(?P<head>\blftp\b[^\n;|&]{0,300}?[ \t]-u[ \t]+(?P<q>['"])?[^\s,'"]+,)""" + _VALUE)),
    # a .netrc's entry (curl's, git's, ftp's credentials file, printed whole by a test that
    # writes it): ``machine host login bob password x``, its tokens on one line or several;
    # the password is the word after its token, whatever it ends with ("x!" was cut at "!")
    GatedShape(
        ("machine",), "password", ("machine[ \t]",),
        lazy_pattern(
            r"""(?P<head>\bmachine[ \t]+\S+(?:\s+(?:login|account|port|protocol)[ \t]+\S+){0,4}"""
            r"""\s+password[ \t]+)(?P<value>[^\s'"]\S*)""")),
    # a network device's configuration (Cisco's IOS and NX-OS, Arista's EOS), as ``show
    # running-config`` prints it over SSHLibrary or Telnet: the value after its type (0
    # plain, 5/8/9 hashes, 7 reversible, EOS' sha512), or a quoted one. Case matters, each
    # word one blank apart, as the devices print them; a ``password x`` or ``key x`` line of
    # its own (a vty's, a key chain's) is read with its type only, a device's type (7: hex),
    # and the value ending the line: "password 0 attempts remaining" and "key 1 of 3" are a
    # log's prose (their word was masked, "attempts" registered: masked wherever it stood)
    GatedShape(
        ("secret", "password", "community", "key"), "",
        ("enable[ \t]secret", "enable[ \t]password", "username[ \t]", "snmp-server[ \t]community",
         "tacacs-server[ \t]", "radius-server[ \t]", "key[ \t][0-9][ \t]", "key-string",
         "neighbor[ \t]", "authentication-key", "message-digest-key", "isakmp[ \t]key",
         "pre-shared-key", "password[ \t][0-9][ \t]"),
        lazy_pattern(
            r"""(?m)^(?P<head>[ \t]*(?:enable[ \t](?:secret|password)(?:[ \t]level[ \t]\d+)?"""
            r"""|username[ \t]\S+(?:[ \t](?!(?:password|secret)[ \t])\S+){0,6}?[ \t](?:password|secret)"""
            r"""|snmp-server[ \t]community|(?:tacacs|radius)-server[ \t](?:host[ \t]\S+[ \t])?key"""
            r"""|key-string|(?:key|password)(?=[ \t](?:7[ \t]+[0-9A-Fa-f]+"""
            r"""|[045689][ \t]+(?:"[^"\n]+"|\S+))[ \t]*$)"""
            r"""|neighbor[ \t]\S+[ \t]password|ip(?:v6)?[ \t]ospf[ \t](?:authentication-key"""
            r"""|message-digest-key[ \t]\d+[ \t]md5)|crypto[ \t]isakmp[ \t]key"""
            r"""|pre-shared-key(?:[ \t](?:local|remote))?)"""
            r"""[ \t]+(?:(?:[0-9]|sha512)[ \t]+(?=\S))?(?P<q>")?)(?P<value>(?(q)[^"\n]+|\S+))""")),
    # a value JavaScript sets into a password field (SeleniumLibrary's ``Execute JavaScript``
    # logs its code): ``document.getElementById('password').value = 'x'``, ``querySelector``,
    # ``getElementsByName('pwd')[0]``, jQuery's ``$('#pw').val('x')``; the locator is a
    # password field's as for typed text (``secret_shapes.password_field``)
    GatedShape(
        (").val", "].val"), "", ("\\)\\.val", "\\]\\.val"),
        lazy_pattern(
            r"""(?P<head>(?:\bgetElementById|\bquerySelector(?:All)?|\bgetElementsByName|\$)"""
            r"""\(\s*(?P<lq>['"])(?P<locator>[^'"\n]{1,200})(?P=lq)\s*\)(?:\[\d+\])?"""
            r"""\.(?:value\s*=\s*|val\(\s*)(?P<q>['"]))(?P<value>[^'"\n]+)"""),
        lambda match: password_field(match["locator"])),
    # DB2's CONNECT (its command line processor's ``db2 connect to sample user bob using x``,
    # a script's ``CONNECT TO sample USER bob USING 'x'``): the password after USING
    GatedShape(
        ("connect to",), "", ("connect[ \t]to[ \t]",),
        lazy_pattern(
            r"""(?i)(?P<head>\bconnect[ \t]+to[ \t]+[\w$#@.-]+[ \t]+user[ \t]+\S+[ \t]+using[ \t]+"""
            r"""(?P<q>['"])?)""" + _VALUE),
        lambda match: match["value"][:1] not in "$:?"),
    # what an expect script (Tcl's ``expect "password:"; send "x\r"``, ``expect "*assword*"
    # { send "x\r" }``) or pexpect (``child.expect('Password:')``, then ``child.sendline('x')``)
    # sends to a password prompt: the string sent, its \r or \n escape kept; a variable
    # (``$pw``, ``[lindex $argv 0]``) stays
    GatedShape(
        ("assword", "passwd", "passphrase"), "send",
        ("send[ \t(]?['\"]", "sendline[ \t(]?['\"]", "send[ \t]--[ \t]['\"]"),
        lazy_pattern(
            r"""(?i)(?P<head>\bexpect\b[ \t(]*(?:-\w+[ \t]+)*(?P<pq>['"])[^'"\n]{0,60}?"""
            r"""(?:assword|passwd|passphrase)[^'"\n]{0,40}(?P=pq)[ \t)]*(?:[;\n{][ \t]*)*"""
            r"""(?:\w+\.)?(?:exp_)?send(?:line)?[ \t(]*(?:--[ \t]+)?(?P<q>['"]))"""
            r"""(?P<value>(?:[^'"\\\n]|\\(?![rn]))+)"""),
        lambda match: match["value"][:1] not in "$["),
    # SMTP's AUTH LOGIN: after the server's challenge "Password:" in base64 (334
    # UGFzc3dvcmQ6), the client's next line is the password in base64, as smtplib's debug
    # output (``send: 'aHVudGVy\r\n'``) or a session's transcript (``C: aHVudGVy``) shows it
    GatedShape(
        ("ugfzc3dvcmq6", "cgfzc3dvcmq6"), "", ("[uc]gfzc3dvcmq6",),
        lazy_pattern(
            r"""(?P<head>\b334[ ](?:UGFzc3dvcmQ6|cGFzc3dvcmQ6)[^\n]*\n"""
            r"""(?:[^\n]*(?:\b334\b|UGFzc3dvcmQ6|cGFzc3dvcmQ6)[^\n]*\n){0,2}"""
            r"""(?:send:[ ]b?['"]|[ \t]*(?:C:|>+)?[ \t]*))"""
            r"""(?P<value>[A-Za-z0-9+/]{2,}={0,2})(?=\\r|\\n|['"]|[ \t]*(?:\n|$))""")),
)
# The trigger scan's marks of every row (``secret_shapes.shape_marks`` joins them to its tree)
TRIGGER_MARKS = tuple(mark for shape in GATED_SHAPES for mark in shape.trigger)


def may_hold_any(text: str, lowered: str) -> bool:
    """Whether a row's marks may be in ``text``: each holds one of these few substrings
    (a test holds them so), asked inline. The writer asks every message: the rows' twenty
    marks asked one by one cost ~1 µs a message, these ~0.2."""
    return ("pass" in lowered or "auth" in lowered or "key" in lowered or "secret" in lowered
            or "community" in lowered or "redis" in lowered or "gfzc3dvcmq6" in lowered
            or ".val" in lowered or "assword" in lowered  # expect's glob: "*assword:*"
            or "connect to" in lowered
            or ((" -" in text or " /" in text) and (  # a command's option: its tool's name
                "lftp" in lowered or "winrs" in lowered or "schtasks" in lowered or "freerdp" in lowered))
            or ("/" in text and any(map(lowered.__contains__, _ORACLE_MARKS))))


def gated_secrets(text: str, lowered: str) -> list[str]:
    """The values every row finds in ``text`` (lower-cased as ``lowered``), each row's
    pattern run only where its marks are."""
    if not may_hold_any(text, lowered):
        return []
    return [value for shape in GATED_SHAPES if shape.may_hold(text, lowered)
            for value in shape.values(text)]


def masked_gated(text: str, lowered: str, sub: Callable[..., str]) -> str:
    """``text`` with every row's values masked (``sub``: the masking's counting substitute)."""
    if not may_hold_any(text, lowered):
        return text
    for shape in GATED_SHAPES:
        if shape.may_hold(text, lowered):
            text = sub(shape.pattern(), text, shape.masked)
    return text
