#!/usr/bin/env python3
"""Write a large, valid, realistic RF 7.x output.xml (schema 5) of about a given size, streaming.

    python benchmarks/gen_output.py --size-mb 100 -o benchmarks/data/out100.xml

The shape follows real API/UI suites: directory > file suites with setup/teardown, tests with
setup/teardown, user keywords calling library keywords (args, assign, doc, TRACE argument and
return lines, DEBUG/INFO logging, some long JSON payloads and HTML), FOR loops (some with
thousands of iterations), IF/ELSE IF/ELSE, TRY/EXCEPT/FINALLY, WHILE with BREAK/CONTINUE,
VAR, GROUP, RETURN; a few failing and skipped tests, WARN/ERROR messages repeated in
<errors>, and <statistics>. ``robot.api.ExecutionResult`` reads the result.

Memory stays flat: only the open elements and per-suite counters are kept.
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import TextIO
from xml.sax.saxutils import escape, quoteattr

WORDS = (
    "order", "customer", "session", "token", "invoice", "cart", "payment", "ship", "address",
    "retry", "status", "user", "item", "price", "total", "checkout", "queue", "worker", "cache",
    "report", "export", "login", "account",
)


class Writer:
    def __init__(self, out: TextIO, target: int, seed: int) -> None:
        self.out = out
        self.target = target
        self.rnd = random.Random(seed)
        self.buf: list[str] = []
        self.size = 0
        self.clock = datetime(2026, 11, 29, 8, 0, 0)
        self.errors: list[str] = []
        self.suite_stats: list[tuple[str, str, int, int, int]] = []
        self.trace_share = 0.35  # share of keywords logging TRACE arguments/return lines

    # -- output ----------------------------------------------------------------------------

    def w(self, text: str) -> None:
        self.buf.append(text)
        if len(self.buf) > 4096:
            self.flush()

    def flush(self) -> None:
        chunk = "".join(self.buf)
        self.buf.clear()
        self.out.write(chunk)
        self.size += len(chunk.encode("utf-8")) if not chunk.isascii() else len(chunk)

    def full(self) -> bool:
        return self.size + sum(len(b) for b in self.buf[-64:]) * 0 >= self.target

    def now(self, step_us: int | None = None) -> str:
        self.clock += timedelta(microseconds=step_us or self.rnd.randint(20, 900))
        return self.clock.isoformat(timespec="microseconds")

    def status(self, status: str, start: str, message: str = "") -> None:
        elapsed = self.rnd.randint(1, 900_000) / 1e6
        text = escape(message)
        if text:
            self.w(f'<status status="{status}" start="{start}" elapsed="{elapsed:.6f}">{text}</status>\n')
        else:
            self.w(f'<status status="{status}" start="{start}" elapsed="{elapsed:.6f}"/>\n')

    def msg(self, level: str, text: str, html: bool = False) -> None:
        attr = ' html="true"' if html else ""
        stamp = self.now()
        self.w(f'<msg time="{stamp}" level="{level}"{attr}>{escape(text)}</msg>\n')
        if level in ("WARN", "ERROR"):
            self.errors.append(f'<msg time="{stamp}" level="{level}">{escape(text)}</msg>\n')

    def words(self, count: int) -> str:
        return " ".join(self.rnd.choice(WORDS) for _ in range(count))

    # -- keywords ----------------------------------------------------------------------------

    def library_kw(self, name: str, owner: str, args: list[str], assign: str | None = None,
                   fail: str | None = None, messages: tuple[tuple[str, str], ...] = (),
                   kw_type: str | None = None) -> None:
        type_attr = f' type="{kw_type}"' if kw_type else ""
        self.w(f'<kw name={quoteattr(name)} owner="{owner}"{type_attr}>\n')
        start = self.now()
        trace = self.rnd.random() < self.trace_share
        if trace:
            self.msg("TRACE", "Arguments: [ " + " | ".join(f"'{a}'" for a in args) + " ]")
        for level, text in messages:
            self.msg(level, text)
        if fail:
            self.msg("FAIL", fail)
        elif trace:
            self.msg("TRACE", f"Return: {self.rnd.choice(['None', repr(self.words(2))])}")
        if assign:
            self.w(f"<var>{assign}</var>\n")
        for arg in args:
            self.w(f"<arg>{escape(arg)}</arg>\n")
        self.w(f"<doc>{escape(name)} as documented in {owner}.</doc>\n")
        self.status("FAIL" if fail else "PASS", start, fail or "")
        self.w("</kw>\n")

    def payload(self) -> str:
        size = self.rnd.choice((2, 3, 5, 8, 12, 40, 150))
        return json.dumps({f"{self.rnd.choice(WORDS)}_{i}": self.words(4) for i in range(size)})

    def api_call(self, fail: str | None = None) -> None:
        resource = self.rnd.choice(WORDS)
        self.library_kw(
            "GET On Session", "RequestsLibrary", ["api", f"/{resource}/{self.rnd.randint(1, 9999)}"],
            assign="${response}", fail=fail,
            messages=(("INFO", f"GET Request : url=https://api.example.test/{resource} headers="
                               "{'Accept': 'application/json'}"),
                      ("DEBUG", f"Response body: {self.payload()}")),
        )

    def user_kw(self, name: str, body: list, fail: str | None = None, kw_type: str | None = None) -> None:
        type_attr = f' type="{kw_type}"' if kw_type else ""
        self.w(f'<kw name={quoteattr(name)} owner="common"{type_attr}>\n')
        start = self.now()
        for index, step in enumerate(body):
            step(fail if index == len(body) - 1 else None)
        self.w(f"<arg>{self.rnd.choice(WORDS)}</arg>\n")
        self.w(f"<doc>User keyword {escape(name)}.</doc>\n")
        self.status("FAIL" if fail else "PASS", start, fail or "")
        self.w("</kw>\n")

    def log(self, fail: str | None = None, level: str = "INFO") -> None:
        text = self.words(self.rnd.randint(3, 12))
        self.library_kw("Log", "BuiltIn", [text, level], fail=fail, messages=((level, text),))

    def set_variable(self, fail: str | None = None) -> None:
        value = self.words(2)
        self.library_kw("Set Variable", "BuiltIn", [value], assign="${value}", fail=fail,
                        messages=(("INFO", f"${{value}} = {value}"),))

    def check(self, fail: str | None = None) -> None:
        value = str(self.rnd.randint(1, 500))
        self.library_kw("Should Be Equal", "BuiltIn", ["${response.status_code}", value],
                        fail=fail and f"{fail}: 500 != {value}")

    # -- control structures ------------------------------------------------------------------

    def for_loop(self, iterations: int, fail_at: int | None) -> None:
        self.w('<for flavor="IN RANGE">\n')
        start = self.now()
        failed = False
        for i in range(iterations):
            self.w("<iter>\n")
            istart = self.now()
            fail = "iteration failed" if i == fail_at else None
            self.library_kw("Process Row", "DataLib", [f"${{row}}[{i}]"], fail=fail)
            self.w(f'<var name="${{i}}">{i}</var>\n')
            self.status("FAIL" if fail else "PASS", istart, fail or "")
            self.w("</iter>\n")
            if fail:
                failed = True
                break
        self.w("<var>${i}</var>\n")
        self.w(f"<value>{iterations}</value>\n")
        self.status("FAIL" if failed else "PASS", start, "iteration failed" if failed else "")
        self.w("</for>\n")

    def if_else(self) -> None:
        self.w("<if>\n")
        start = self.now()
        taken = self.rnd.randint(0, 2)
        for index, (kind, cond) in enumerate((("IF", "${x} == 1"), ("ELSE IF", "${x} &gt; 5"), ("ELSE", ""))):
            cond_attr = f' condition="{cond}"' if cond else ""
            self.w(f'<branch type="{kind}"{cond_attr}>\n')
            bstart = self.now()
            if index == taken:
                self.log()
                self.status("PASS", bstart)
            else:
                self.w('<kw name="Log" owner="BuiltIn">\n<arg>not run</arg>\n')
                self.status("NOT RUN", bstart)
                self.w("</kw>\n")
                self.status("NOT RUN", bstart)
            self.w("</branch>\n")
        self.status("PASS", start)
        self.w("</if>\n")

    def try_except(self) -> None:
        self.w("<try>\n")
        start = self.now()
        self.w('<branch type="TRY">\n')
        tstart = self.now()
        self.library_kw("Click Element", "Browser", ["id=submit"], fail="Element not found")
        self.status("FAIL", tstart, "Element not found")
        self.w("</branch>\n")
        self.w('<branch type="EXCEPT" assign="${err}">\n<pattern>Element*</pattern>\n')
        estart = self.now()
        self.log(level="WARN")
        self.status("PASS", estart)
        self.w("</branch>\n")
        self.w('<branch type="FINALLY">\n')
        fstart = self.now()
        self.log()
        self.status("PASS", fstart)
        self.w("</branch>\n")
        self.status("PASS", start)
        self.w("</try>\n")

    def while_loop(self) -> None:
        self.w('<while condition="$retries &lt; 5" limit="10">\n')
        start = self.now()
        for i in range(3):
            self.w("<iter>\n")
            istart = self.now()
            self.api_call()
            if i == 2:
                self.w("<break>\n")
                self.status("PASS", self.now())
                self.w("</break>\n")
            self.status("PASS", istart)
            self.w("</iter>\n")
        self.status("PASS", start)
        self.w("</while>\n")

    def var_and_group(self) -> None:
        self.w('<group name="Prepare data">\n')
        start = self.now()
        self.w('<variable name="${payload}">\n')
        vstart = self.now()
        value = self.words(5)
        self.msg("INFO", f"${{payload}} = {value}")
        self.w(f"<var>{value}</var>\n")
        self.status("PASS", vstart)
        self.w("</variable>\n")
        self.status("PASS", start)
        self.w("</group>\n")

    # -- tests and suites ----------------------------------------------------------------------

    def test(self, test_id: str, index: int) -> str:
        roll = self.rnd.random()
        outcome = "FAIL" if roll < 0.03 else "SKIP" if roll < 0.04 else "PASS"
        self.w(f'<test id="{test_id}" name="Scenario {index} {self.words(2)}" line="{index * 7 + 3}">\n')
        start = self.now()
        self.library_kw("Set Test Variable", "BuiltIn", ["${id}", str(index)], kw_type="SETUP")
        steps = [self.api_call, self.check, self.log, self.set_variable, self.check]
        kind = self.rnd.random()
        if kind < 0.04:
            self.for_loop(self.rnd.choice((50, 300, 2000)), None)
        elif kind < 0.25:
            self.for_loop(self.rnd.randint(3, 20), None)
        if self.rnd.random() < 0.3:
            self.if_else()
        if self.rnd.random() < 0.15:
            self.try_except()
        if self.rnd.random() < 0.1:
            self.while_loop()
        if self.rnd.random() < 0.2:
            self.var_and_group()
        for n in range(self.rnd.randint(2, 5)):
            fail = "Request failed" if outcome == "FAIL" and n == 0 else None
            self.user_kw(f"Verify {self.rnd.choice(WORDS)} flow", steps, fail=fail)
            if fail:
                break
        if outcome == "SKIP":
            self.library_kw("Skip", "BuiltIn", ["Not on staging"], messages=(("SKIP", "Not on staging"),))
        self.library_kw("Log", "BuiltIn", ["cleanup"], kw_type="TEARDOWN", messages=(("INFO", "cleanup"),))
        self.w(f"<tag>{self.rnd.choice(('smoke', 'regression', 'api'))}</tag>\n")
        message = {"FAIL": "Request failed: 500 != 200", "SKIP": "Not on staging"}.get(outcome, "")
        self.status(outcome, start, message)
        self.w("</test>\n")
        return outcome

    def suite(self, suite_id: str, index: int) -> tuple[int, int, int]:
        name = f"Feature {index} {self.words(1).title()}"
        self.w(f'<suite id="{suite_id}" name="{name}" source="/work/tests/feature_{index}.robot">\n')
        start = self.now()
        self.library_kw("Open Connection", "common", ["https://api.example.test"], kw_type="SETUP")
        counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
        for t in range(1, self.rnd.randint(5, 25) + 1):
            counts[self.test(f"{suite_id}-t{t}", t)] += 1
            if self.full():
                break
        self.library_kw("Close Connection", "common", [], kw_type="TEARDOWN")
        self.w(f"<doc>Feature {index}.</doc>\n")
        status = "FAIL" if counts["FAIL"] else "PASS" if counts["PASS"] else "SKIP"
        self.status(status, start)
        self.w("</suite>\n")
        self.suite_stats.append((suite_id, name, counts["PASS"], counts["FAIL"], counts["SKIP"]))
        return counts["PASS"], counts["FAIL"], counts["SKIP"]

    def run(self) -> None:
        self.w('<?xml version="1.0" encoding="UTF-8"?>\n')
        self.w('<robot generator="Robot 7.5 (Python 3.11.7 on linux)" '
               f'generated="{self.now()}" rpa="false" schemaversion="5">\n')
        self.w('<suite id="s1" name="Generated" source="/work/tests">\n')
        start = self.now()
        totals = [0, 0, 0]
        index = 0
        while not self.full():
            index += 1
            for k, v in enumerate(self.suite(f"s1-s{index}", index)):
                totals[k] += v
        status = "FAIL" if totals[1] else "PASS"
        self.status(status, start)
        self.w("</suite>\n<statistics>\n<total>\n")
        self.w(f'<stat pass="{totals[0]}" fail="{totals[1]}" skip="{totals[2]}">All Tests</stat>\n')
        self.w("</total>\n<tag>\n</tag>\n<suite>\n")
        for suite_id, name, p, f, s in self.suite_stats:
            self.w(f'<stat pass="{p}" fail="{f}" skip="{s}" id="{suite_id}" name="{name}">{name}</stat>\n')
        self.w("</suite>\n</statistics>\n<errors>\n")
        for error in self.errors[:1000]:
            self.w(error)
        self.w("</errors>\n</robot>\n")
        self.flush()


def generate(path: Path, size_mb: float, seed: int = 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        Writer(out, int(size_mb * 1_000_000), seed).run()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=float, default=100)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    generate(args.output, args.size_mb, args.seed)
    print(f"{args.output}: {args.output.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
