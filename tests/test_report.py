"""The ablation report: one self-contained HTML page whose plots render in a real headless Chromium."""

import json
import os
import re
import shutil
import struct
import subprocess
import zlib

import pytest
from click.testing import CliRunner

from owl_memory.ablation.records import Record, append_record, read_records
from owl_memory.ablation.report import build_report
from owl_memory.ablation.summary import interval, summarize
from owl_memory.cli import main

PLOTS = ("holdout-success", "tokens-per-task", "iterations-per-task", "payload-chars", "memory-vs-success")


def _records():
    """Two repeats of A0/A2/A4 over three checkpoints with distinct, plausible numbers."""
    out = []
    for cond, skill, leak in (("A0", 0.0, 0), ("A2", 0.3, 0), ("A4", 0.15, 4000)):
        for rep in range(2):
            for cp in range(3):
                for t in range(4):
                    ok = (t + rep) / 4 < 0.25 + skill * cp
                    out.append(Record(cond, rep, "holdout", cp, cp * 3, f"h{t}", "holdout", ok, "sparql",
                                      iterations=6 - cp if cond != "A0" else 6, lm_calls=6, prompt_tokens=900 + leak,
                                      completion_tokens=120, tool_calls=5, payload_chars_in_history=leak + t,
                                      memory_items=0 if cond == "A0" else 2 * cp, seconds=0.5))
                if cp < 2:
                    out += [Record(cond, rep, "train", cp + 1, cp * 3 + t, f"t{cp * 3 + t}", "train", True, "sparql",
                                   extracted=() if cond == "A0" else (f"i{cp}{t % 2}",)) for t in range(3)]
    return out


def _write(folder, records):
    """results.jsonl and summary.json as the harness writes them."""
    for r in records:
        append_record(folder / "results.jsonl", r)
    (folder / "summary.json").write_text(json.dumps(summarize(records, {"curriculum": "test"}).to_dict()))


def _png_pixels(data: bytes) -> tuple[int, int, set]:
    """Width, height and the set of distinct RGB pixels of an 8-bit RGB(A) PNG (Chromium's screenshot)."""
    w, h, depth, ctype = struct.unpack(">IIBB", data[16:26])
    idat = b"".join(data[i + 8:i + 8 + struct.unpack(">I", data[i:i + 4])[0]] for i in _chunks(data, b"IDAT"))
    raw, bpp = zlib.decompress(idat), 4 if ctype == 6 else 3
    stride, prev, colours = w * bpp, bytearray(w * bpp), set()
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a, b, c = line[i - bpp] if i >= bpp else 0, prev[i], prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pred = (a, b, (a + b) // 2, a if abs(p - a) <= min(abs(p - b), abs(p - c)) else
                    (b if abs(p - b) <= abs(p - c) else c))
            line[i] = (line[i] + (0 if f == 0 else pred[f - 1])) & 0xFF
        colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp * 7))
        prev = line
    return w, h, colours


def _chunks(data: bytes, kind: bytes):
    """Offsets of the PNG chunks of one kind."""
    i = 8
    while i < len(data):
        n = struct.unpack(">I", data[i:i + 4])[0]
        if data[i + 4:i + 8] == kind:
            yield i
        i += 12 + n


def test_summary_intervals_and_resume_keys(tmp_path):
    """Holdout success per checkpoint has a mean inside its 95% interval; a torn last line is ignored."""
    recs = _records()
    _write(tmp_path, recs)
    with open(tmp_path / "results.jsonl", "a") as f:
        f.write('{"condition": "A2", "rep')
    assert read_records(tmp_path / "results.jsonl") == recs
    s = summarize(recs).conditions
    assert [h.train_seen for h in s["A2"].holdout] == [0, 3, 6]
    assert s["A2"].holdout[-1].mean > s["A0"].holdout[-1].mean
    for h in s["A2"].holdout:
        assert h.low <= h.mean <= h.high
    assert s["A2"].dedup_rate == pytest.approx(1 - 4 / 12, abs=1e-4)
    assert s["A4"].leakage.payload_chars_in_history_max == 4003
    growth, curve = s["A2"].memory_growth, s["A2"].holdout  # memory growth vs gain, first to last checkpoint
    assert (growth.items_start, growth.items_end) == (0, 4) and growth.success_gain > 0
    assert growth.success_gain == pytest.approx(curve[-1].mean - curve[0].mean)
    assert growth.gain_per_100_items == pytest.approx(100 * growth.success_gain / 4, abs=1e-3)
    assert s["A0"].memory_growth.gain_per_100_items is None  # no growth: no ratio
    assert interval([], 5, 10)[0] < 0.5 < interval([], 5, 10)[1]


def test_report_is_self_contained(tmp_path):
    """Every plot is an inline svg; no script, no external reference."""
    _write(tmp_path, _records())
    page = build_report(tmp_path).read_text()
    for plot in PLOTS:
        assert f'id="{plot}"' in page
    assert "<script" not in page and not re.search(r'(src|href)="https?:', page)


def test_report_command_rebuilds(tmp_path):
    """`owl-memory report DIR` writes report.html; a folder without results is a bad-input exit 2."""
    _write(tmp_path, _records())
    r = CliRunner().invoke(main, ["report", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["report"].endswith("report.html")
    assert (tmp_path / "report.html").stat().st_size > 5000
    empty = tmp_path / "empty"
    empty.mkdir()
    r = CliRunner().invoke(main, ["report", str(empty)])
    assert r.exit_code == 2 and "owl-memory ablate" in r.output


def chromium(*args, tmp_path) -> subprocess.CompletedProcess:
    """Run headless Chromium (from the OS packages) with no network, sync or first-run work."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None and os.environ.get("OWL_MEMORY_REQUIRE_DATA") == "1":
        pytest.fail("chromium is missing in CI: .ci/run installs it (apt-get install -y chromium)")
    if exe is None:
        pytest.skip("chromium is not installed (CI installs it: apt-get install -y chromium)")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}"]
    return subprocess.run([exe, *flags, *args], capture_output=True, timeout=120)


@pytest.mark.slow
def test_report_renders_in_chromium(tmp_path):
    """Chromium lays out every plot as an svg with content, and the screenshot is not blank."""
    _write(tmp_path, _records())
    page = build_report(tmp_path)
    dom = chromium("--dump-dom", page.as_uri(), tmp_path=tmp_path).stdout.decode()
    svgs = re.findall(r'<svg id="([^"]+)" class="plot"', dom)
    assert set(PLOTS) <= set(svgs)
    assert dom.count("<polyline") >= 6 and dom.count("<rect") > 20
    shot = tmp_path / "shot.png"
    chromium(f"--screenshot={shot}", "--window-size=1280,1400", page.as_uri(), tmp_path=tmp_path)
    w, h, colours = _png_pixels(shot.read_bytes())
    assert (w, h) == (1280, 1400)
    condition_colours = {bytes.fromhex(c) for c in ("7f7f7f", "2ca02c", "d62728")}
    assert len(colours) > 20 and condition_colours <= colours


def test_headline_names_the_learner_and_says_when_nothing_learned_or_leaked(tmp_path):
    """The page's three sentences name the winner, all tied winners, or say that no condition learned or leaked."""
    from owl_memory.ablation.report import headline

    lead = headline(summarize(_records()))
    assert "Learned most: <b>A2</b>" in lead and "Most leakage: <b>A4</b>" in lead
    flat = [Record(c, 0, "holdout", cp, cp, "h", "holdout", False, "answer", iterations=2)
            for c in ("A0", "A2") for cp in range(2)]
    lead = headline(summarize(flat, {"curriculum": "flat"}))
    assert "No condition learned" in lead and "Learned most" not in lead
    assert "No payload characters reached the LM history" in lead and "Cheapest: <b>A0, A2</b>" in lead
    _write(tmp_path, flat)
    meta = json.loads((tmp_path / "summary.json").read_text())
    meta["arms"] = [{"name": "A0", "condition": "A0", "layers": []},
                    {"name": "E3", "condition": "A2", "layers": ["L1"]}]
    (tmp_path / "summary.json").write_text(json.dumps(meta))
    assert "arms: <b>A0; E3 = A2 + L1</b>" in build_report(tmp_path).read_text()


def test_headline_names_who_learned_in_cost_when_success_stays_flat():
    """Construction ablations: every holdout task succeeds throughout, and the arm that learned needs fewer
    verify iterations (pySHACL validations) afterwards; the page says so, and breaks a token tie on iterations."""
    from owl_memory.ablation.report import headline

    recs = [Record(c, 0, "holdout", cp, cp, f"h{t}", "holdout", True, "shacl", iterations=3 - (c == "A2" and cp > 0),
                   validations=3 - (c == "A2" and cp > 0), memory_items=0 if c == "A0" else 40 * cp)
            for c in ("A0", "A2") for cp in range(2) for t in range(2)]
    lead = headline(summarize(recs))
    assert "No condition learned" not in lead
    assert "Learned most: <b>A2</b>, in cost" in lead and "(3 → 2 per task, pySHACL validations 3 → 2" in lead
    assert "Cheapest: <b>A2</b> (0 tokens and 2.5 iterations per task)" in lead


def test_equal_conditions_stay_visible_side_by_side():
    """Five conditions with the same holdout curve (the scripted stand-in's 0.0 everywhere): each colour's markers
    sit at the same height a few pixels apart, not one on top of the other."""
    from owl_memory.ablation.svg import PALETTE, Series, line_chart

    pts = ((0.0, 0.0, 0.0, 0.49), (1.0, 0.0, 0.0, 0.49))
    svg = line_chart("holdout-success", "t", [Series(c, pts) for c in PALETTE], "x", "y", y_max=1.0)
    circles = re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="4" fill="(#[0-9a-f]+)"', svg)
    first = {colour: float(cx) for cx, cy, colour in circles[::2]}  # each series' first checkpoint
    assert set(first) == set(PALETTE.values()) and len({cy for _, cy, _ in circles}) == 1
    xs = sorted(first.values())
    assert all(b - a >= 2 for a, b in zip(xs, xs[1:], strict=False))
    widths = [float(w) for w in re.findall(r'<polyline [^>]*stroke-width="([\d.]+)"', svg)]
    assert widths == sorted(widths, reverse=True) and widths[-1] < widths[0]  # a later line leaves the earlier's edge
