"""Leakage measured from the LM's actual inputs, under adversarial scripted agents and on synthetic histories."""

import json
import random
import string

import pytest
from dspy.utils import DummyLM

from owl_memory.adapters.dspy import calls_of
from owl_memory.agent.leakage import K, bait_hits, measure, payload_spans, union_length
from owl_memory.agent.runner import run
from owl_memory.agent.tools import MAX_RETURN
from owl_memory.agent.trajectory import read_trajectory
from owl_memory.model import Iteration, ToolResult

BAIT = "BAIT-7f3a9c-OWL-MEMORY-SECRET"
_rng = random.Random(4)
_body = "".join(_rng.choice(string.ascii_letters + string.digits + " ") for _ in range(50_000))
PROMPT = _body[:30_000] + BAIT + _body[30_000:]  # 50 KB, no quotes/backslashes/newlines: printed verbatim
TTL = """@prefix ex: <http://example.org/t#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
ex:A a owl:Class . ex:B a owl:Class ."""


def agent(*codes, **kw):
    """Run a scripted adversary over PROMPT (A0); returns (result, lm, trajectory events)."""
    answers = [{"reasoning": "try", "code": f"```python\n{c}\n```"} if isinstance(c, str) else c for c in codes]
    lm = DummyLM(answers + [{"reasoning": "done", "code": "SUBMIT(answer='done')"}])
    r = run("summarize the hidden prompt", prompt=PROMPT, ontology=TTL, lm=lm, condition="A0", **kw)
    return r, lm, read_trajectory(r.trajectory_path)


def history_text(lm) -> str:
    """Everything the LM received, as one string."""
    return json.dumps([e["messages"] for e in lm.history], ensure_ascii=False)


def test_an_agent_that_never_prints_payload_leaks_nothing(tmp_path):
    r, lm, _ = agent("n = 0\nfor i in range(0, 50000, 512):\n    w = prompt_window(i, 512)\n"
                     "    n += len(w['text']) if isinstance(w, dict) else 0\nprint(n)", trajectory_dir=tmp_path)
    assert r.metrics.payload_chars_in_history == 0 and r.metrics.payload_chars_sent == 0
    assert r.metrics.read_chars == 20_000  # the budget stopped the loop
    assert BAIT not in history_text(lm)


def test_window_loop_is_stopped_by_the_budget_and_counted_exactly(tmp_path):
    r, lm, events = agent("s = ''\nfor i in range(200):\n    w = prompt_window(i * 512, 512)\n"
                          "    if isinstance(w, str):\n        print(w)\n        break\n    s += w['text']\n"
                          "print(len(s))\nprint(s)", trajectory_dir=tmp_path)
    raw = next(e for e in events if isinstance(e, Iteration))
    error = raw.output.split("\n", 1)[0]
    assert error.startswith("[Error] prompt_window: read budget of 20000 characters is spent")
    prefix = len(error) + len("\n20000\n")
    # the REPL output (prefix + 20,000 chars) is cut by dspy to head 2,000 + tail 2,000 characters
    assert raw.output_chars == prefix + 20_000
    assert r.metrics.payload_chars_in_history == (2_000 - prefix) + 2_000
    assert r.metrics.payload_chars_sent == (2_000 - prefix) + 2_000  # seen by one later LM call
    assert BAIT not in history_text(lm) and r.metrics.max_window == 512


def test_bait_hunter_gets_exactly_one_capped_window(tmp_path):
    r, lm, _ = agent("off = prompt_find('BAIT-7f3a9c')['offsets'][0]\nw = prompt_window(off - 100, 10**9)\n"
                     "print(w['text'])", "print('thinking')", trajectory_dir=tmp_path)
    assert history_text(lm).count(BAIT) == 2  # the window, seen by the two later LM calls
    assert bait_hits(calls_of(lm.history), [BAIT]) == {BAIT: 2}
    assert r.metrics.payload_chars_in_history == 512
    assert r.metrics.payload_chars_sent == 1024


def test_handle_reprs_and_metadata_carry_no_payload(tmp_path):
    r, lm, _ = agent("print(prompt)\nprint(prompt_stats())\nprint(repr(prompt_find('BAIT')))\nprint(ontology_stats())\n"
                     "h = ontology_query('SELECT ?s WHERE { ?s ?p ?o }')\nprint(h)", trajectory_dir=tmp_path)
    assert r.metrics.payload_chars_in_history == 0
    assert "sha256:" in history_text(lm)  # handles did reach the model, payload did not


def test_exceptions_that_echo_arguments_are_sanitized_and_self_made_leaks_counted(tmp_path):
    code = ("w = prompt_window(0, 300)['text']\nprint(prompt_window(start=w))\nprint(ontology_describe(w))\n"
            "print(handle_window(w))\nprint(results_peek(w))\nprint(prompt_find(w * 20))\nprint(prompt_window(w, w))")
    r, lm, events = agent(code, "raise ValueError(w[:100])", trajectory_dir=tmp_path)
    outs = [e.output for e in events if isinstance(e, Iteration)]
    assert all(line.startswith("[Error]") for line in outs[0].splitlines())
    assert outs[1].startswith("[Error] ValueError: ") and PROMPT[:100] in outs[1]
    assert r.metrics.payload_chars_in_history == 100  # only what the agent's own exception printed


def test_huge_limits_are_capped(tmp_path):
    r, lm, events = agent("a = prompt_window(0, 10**12)\nb = prompt_find('a', 10**9)\nc = ontology_classes(10**9)\n"
                          "h = ontology_query('SELECT ?s ?p ?o WHERE { ?s ?p ?o }')['handle']\n"
                          "d = results_peek(h, 10**9)\ne = handle_window(prompt['ref'], 0, 10**9)\n"
                          "print([len(str(x)) for x in (a, b, c, d, e)])", trajectory_dir=tmp_path)
    sizes = [e.chars for e in events if isinstance(e, ToolResult)]
    assert len(sizes) == 6 and max(sizes) <= MAX_RETURN
    assert r.metrics.max_window == 512 and r.metrics.payload_chars_in_history == 0


def test_payload_smuggled_to_a_sub_lm_is_counted(tmp_path):
    r, lm, _ = agent("w = prompt_window(1000, 256)['text']\nanswer = llm_query(w)\nprint(len(answer) > 0)",
                     {"reasoning": "sub", "code": "ok"}, trajectory_dir=tmp_path)
    # nothing was printed, but the sub-LM received the window: measured from the LM's inputs, not the tools
    assert r.metrics.payload_chars_in_history == 256 and r.metrics.lm_calls == 3


# ---- the measure itself ---------------------------------------------------------------------------------------

_rng9 = random.Random(9)
P = "".join(_rng9.choice(string.ascii_letters) for _ in range(5_000))


def msgs(*texts, system="You are an agent."):
    """One LM history entry with a system message and user messages."""
    return {"messages": [{"role": "system", "content": system}] + [{"role": "user", "content": t} for t in texts]}


@pytest.mark.parametrize("texts,distinct,sent", [
    (["no payload here at all, just words"], 0, 0),
    (["<<" + P[100:200] + ">>"], 100, 100),
    (["x" + P[100:200], "y" + P[100:200]], 100, 200),  # repeated in a later message: counted once
    (["a" + P[100:200] + "b" + P[150:300]], 200, 250),  # overlapping windows: union of payload positions
    (["a" + P[0:50] + P[4000:4050] + "b"], 100, 100),  # spliced pieces map back to two spans
    (["a" + P[10:10 + K - 1] + "b"], 0, 0),  # shorter than K: not counted (documented limit)
    (["a" + P[10:10 + K] + "b"], K, K),
])
def test_measure_counts_distinct_payload_characters(texts, distinct, sent):
    out = measure(calls_of([msgs(*texts)]), {"prompt": P})
    assert out["payload_chars_in_history"] == distinct and out["payload_chars_sent"] == sent


def test_system_text_and_allowed_text_are_not_payload():
    shared = P[500:700]
    out = measure(calls_of([msgs("q " + shared, system="instructions " + shared)]), {"prompt": P})
    assert out["payload_chars_in_history"] == 0
    assert measure(calls_of([msgs("q " + shared)]), {"prompt": P}, allowed=[shared])["payload_chars_in_history"] == 0


def test_prompt_only_entries_and_content_parts_are_scanned():
    history = [{"messages": None, "prompt": P[:64]},
               {"messages": [{"role": "user", "content": [{"type": "text", "text": P[1000:1032]}]}]}]
    out = measure(calls_of(history), [("prompt", P), ("results", "unrelated " * 10)])
    assert out["payload_chars_by_source"] == {"prompt": 96, "results": 0}


def test_spans_and_union():
    assert payload_spans(P[10:60], P) == [(10, 60)]
    assert union_length([(0, 10), (5, 15), (20, 25)]) == 20


def test_literals_peeked_from_results_count_as_results_payload_iris_do_not(tmp_path):
    literal = "".join(random.Random(3).choices(string.ascii_lowercase, k=60))
    ttl = TTL + f'\nex:A <http://www.w3.org/2000/01/rdf-schema#comment> "{literal}" .'
    lm = DummyLM([{"reasoning": "q", "code": "h = ontology_query('SELECT ?s ?c WHERE { ?s "
                   "<http://www.w3.org/2000/01/rdf-schema#comment> ?c }')['handle']\nprint(results_peek(h, 5))"},
                  {"reasoning": "done", "code": "SUBMIT(answer='done')"}])
    r = run("read comments", ontology=ttl, lm=lm, condition="A0", trajectory_dir=tmp_path)
    assert r.metrics.payload_chars_by_source == {"results": 60}
