"""verifiers v1 episodes (prime-rl's rollouts, verifiers' eval runs): traces.jsonl.

prime-rl's FileMonitor (src/prime_rl/monitors/file.py) appends `Episode.to_record()` of
verifiers (verifiers/v1/episode.py) to `rollouts/step_N/{train,eval}/{all,effective}/
traces.jsonl`; `vf-eval` writes the same records to `<output dir>/traces.jsonl`.  A record
is one episode: `env`, `task`, `group`, `run` (`work.step`), `ok`, `errors` and `traces`.
A trace (verifiers/v1/trace.py) is a message graph: `nodes` of `{parent, message, sampled,
token_ids, mask, logprobs, advantages, reference_logprobs}` where a node holds the tokens it
adds, `mask` marks its sampled (trained) tokens and the float lists cover only those; every
root-to-leaf path is one training sample (verifiers/v1/graph.py `Branch`).  `calls` link
each assistant node to its `finish_reason`; `rewards` are `{name: {score, weight}}`.

One sample per branch: the nodes before the first sampled node are the prompt, the rest the
response, whose tokens carry loss_mask and token_turns.  `effective` holds the admitted
(trained) episodes and `all` every episode, so from `all` only failed episodes are read
(as left-out samples): nothing is counted twice.
"""
from __future__ import annotations

import math

from loaders import schema as S
from loaders.formats.context import FileContext
from loaders.parse.conversation import flat_text
from loaders.parse.text import text_of


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def branches(nodes: list) -> list[list[int]]:
    """Every root-to-leaf path of node indices (a parent loop or a bad index ends a path)."""
    parents = {_dict(n).get("parent") for n in nodes}
    paths = []
    for leaf in (i for i in range(len(nodes)) if i not in parents):
        path, seen, at = [], set(), leaf
        while isinstance(at, int) and 0 <= at < len(nodes) and at not in seen:
            seen.add(at)
            path.append(at)
            at = _dict(nodes[at]).get("parent")
        paths.append(path[::-1])
    return paths


def _spread(node: dict, key: str) -> list[float]:
    """A node's per-sampled-token values on its tokens, NaN on the others."""
    values, out, k = _list(node.get(key)), [], 0
    for sampled in _list(node.get("mask")):
        if sampled and k < len(values):
            out.append(values[k] if isinstance(values[k], (int, float)) else math.nan)
            k += 1
        else:
            out.append(math.nan)
    return out


def _tokens(nodes: list[dict], first: int) -> dict[str, list]:
    out: dict[str, list] = {S.RESPONSE_TOKENS: [], S.LOSS_MASK: [], S.TOKEN_TURNS: [],
                            S.LOGPROBS: [], S.REF_LOGPROBS: [], "advantages": []}
    for turn, node in enumerate(nodes[first:], start=first):
        ids, mask = _list(node.get("token_ids")), _list(node.get("mask"))
        mask = mask if len(mask) == len(ids) else [False] * len(ids)
        out[S.RESPONSE_TOKENS] += [str(t) for t in ids]
        out[S.LOSS_MASK] += [1 if m else 0 for m in mask]
        out[S.TOKEN_TURNS] += [turn] * len(ids)
        node = {**node, "mask": mask}
        for key, source in ((S.LOGPROBS, "logprobs"), (S.REF_LOGPROBS, "reference_logprobs"),
                            ("advantages", "advantages")):
            out[key] += _spread(node, source)
    for key, source in ((S.REF_LOGPROBS, "reference_logprobs"), ("advantages", "advantages")):
        if all(node.get(source) is None for node in nodes[first:]):
            out.pop(key)  # never scored: no column rather than a column of NaN
    return out


def _messages(nodes: list[dict], calls: list) -> list[dict]:
    finish = {c.get("node"): c.get("finish_reason") for c in map(_dict, calls)}
    on_branch = {node.get("_index") for node in nodes}
    spans = {c.get("node"): span for c in map(_dict, calls)
             if c.get("node") in on_branch and (span := _span(c))}
    messages, ended = [], None  # the last model call's end, on this branch
    for node in nodes:
        message = dict(_dict(node.get("message")))
        if finish.get(node.get("_index")) and "finish_reason" not in message:
            message["finish_reason"] = finish[node["_index"]]
        span = spans.get(node.get("_index"))
        if span:  # an assistant turn: its call's own time (the model)
            message.setdefault("seconds", span[1] - span[0])
            ended = span[1]
        elif ended is not None and message.get("role") in ("tool", "user"):
            later = [s for s, _ in spans.values() if s >= ended]
            if later:  # what came back before the next call: the tool's (the env's) time
                message.setdefault("seconds", min(later) - ended)
            ended = None
        messages.append(message or {"role": "other", "content": text_of(node.get("message"))})
    return messages


def _span(call: dict) -> tuple[float, float] | None:
    """A call's (start, end) in Unix seconds (verifiers/v1/trace.py ModelCall.time)."""
    time = call.get("time")
    if not isinstance(time, dict):
        return None
    start, end = time.get("start"), time.get("end")
    ok = isinstance(start, (int, float)) and isinstance(end, (int, float)) and end > 0
    return (float(start), float(end)) if ok and end >= start else None


def _reward(trace: dict) -> tuple[float | None, dict[str, object]]:
    total, columns = 0.0, {}
    for name, reward in _dict(trace.get("rewards")).items():
        reward = _dict(reward)
        score, weight = reward.get("score"), reward.get("weight", 1.0)
        if isinstance(score, (int, float)) and isinstance(weight, (int, float)):
            total += score * weight
            columns[f"reward_{name}"] = score
    return (total if columns else None), columns


def _errors(*holders: dict) -> str:
    for holder in holders:
        errors = _list(holder.get("errors"))
        if errors:
            last = _dict(errors[-1])
            return f"{text_of(last.get('type'))}: {text_of(last.get('message'))}"[:400]
    return ""


def _base(record: dict, context: FileContext) -> dict:
    run, work = _dict(record.get("run")), _dict(_dict(record.get("run")).get("work"))
    step = work.get("step", context.step if context.step is not None else 0)
    task = _dict(record.get("task"))
    policy = _dict(work.get("policy"))  # verifiers/v1/episode.py PolicySpan: live versions
    return {S.STEP: step, "group_id": _dict(record.get("group")).get("id"),
            S.POLICY_VERSION: policy.get("start"), S.POLICY_VERSION_NEWEST: policy.get("end"),
            "prompt_uid": task.get("key"), "env": _dict(record.get("env")).get("id"),
            S.VALIDATION: context.validation or work.get("type") == "eval" or run.get(
                "type") == "eval" or "/eval/" in f"/{context.rel}"}


def _sample(base: dict, trace: dict, path: list[int], nodes: list) -> dict:
    chosen = [{**_dict(nodes[i]), "_index": i} for i in path]
    first = next((k for k, n in enumerate(chosen) if any(_list(n.get("mask")))), len(chosen))
    messages = _messages(chosen, _list(trace.get("calls")))
    reward, reward_columns = _reward(trace)
    sample = {**base, S.MESSAGES: messages, S.PROMPT: flat_text(messages[:first]),
              S.RESPONSE: flat_text(messages[first:]), S.REWARD: reward, **reward_columns,
              **_tokens(chosen, first), "agent": _dict(trace.get("agent")).get("name"),
              "stop_condition": trace.get("stop_condition")}
    sample.update({f"metric_{k}": v for k, v in _dict(trace.get("metrics")).items()})
    sample.update(_timing(_list(trace.get("calls")), set(path)))
    if not trace.get("ok", True) or trace.get("errors"):
        sample["error"] = _errors(trace) or "trace not ok"
    if _dict(trace.get("agent")).get("trainable") is False:
        sample["status"] = "skipped"  # an agent whose tokens do not train the policy
    return sample


def _timing(calls: list, path: set[int]) -> dict:
    """The branch's model calls' time spans (verifiers/v1/trace.py `ModelCall.time`, Unix
    seconds): from the first call's start to the last call's end, the calls' own share of
    it (the model), and the rest between them (tools, the environment)."""
    spans = [span for c in map(_dict, calls) if c.get("node") in path and (span := _span(c))]
    if not spans:
        return {}
    start, finish = min(s for s, _ in spans), max(e for _, e in spans)
    model = sum(e - s for s, e in spans)
    return {S.START_TS: start, S.FINISH_TS: finish, S.REQUEST_S: finish - start,
            S.GENERATE_S: model, S.TOOL_S: max(finish - start - model, 0.0)}


def normalize(record: dict, context: FileContext) -> list[dict]:
    failed = not record.get("ok", False) or bool(record.get("errors"))
    if "/all/" in f"/{context.rel}" and not failed:
        return []  # admitted episodes are read from effective/traces.jsonl
    base = _base(record, context)
    samples = []
    for trace in map(_dict, _list(record.get("traces"))):
        nodes = _list(trace.get("nodes"))
        samples += [_sample(base, trace, path, nodes) for path in branches(nodes)]
    if failed:
        reason = _errors(record) or "episode not ok"
        for sample in samples:
            sample.setdefault("error", reason)
        if not samples:  # a failure before any trace: the task, and why
            samples.append({**base, S.PROMPT: text_of(_dict(record.get("task")).get("data")),
                            "error": reason})
    return samples
