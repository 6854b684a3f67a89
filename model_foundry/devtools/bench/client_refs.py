"""``bench client``'s reference clients, each run as its own process by the bench.

- ``sdk``: the official ``openai`` SDK alone (``AsyncOpenAI``, one client per slot with a
  pool as large as the slot's ``parallel``), streaming or not;
- ``lean``: the least a streaming client can do, as vLLM's own benchmark client does it
  (``vllm/benchmarks/lib/endpoint_request_func.py``, read for its approach, not copied): one
  aiohttp session, the body read as it arrives, split on blank lines, one JSON parse per
  data event, the text joined and the usage kept.

Each sends ``--requests`` requests over ``--urls`` (one per slot, ``--parallel`` at once on
each) and prints one JSON line: the requests that succeeded and the tokens received (words
of the joined answers: the canned server's tokens are one word each). Only the standard
library loads before ``main`` picks a client, so each client's start-up is its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any


def _payload(api: str, model: str, i: int, tokens: int, stream: bool) -> dict[str, Any]:
    req: dict[str, Any] = {"model": model, "max_tokens": tokens, "temperature": 0.7}
    text = f"prompt {i}: say something"
    if api == "chat":
        req["messages"] = [{"role": "user", "content": text}]
    else:
        req["prompt"] = text
    if stream:
        req["stream"] = True
        req["stream_options"] = {"include_usage": True}
    return req


async def _sdk(args: argparse.Namespace) -> tuple[int, int]:
    import openai

    try:  # the transport the installed SDK ships on (httpx2 from openai 3 on)
        import httpx2 as httpx
    except ImportError:  # pragma: no cover - depends on the installed SDK
        import httpx  # type: ignore[no-redef]

    clients = [
        openai.AsyncOpenAI(
            base_url=url, api_key="none", max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(
                limits=httpx.Limits(max_connections=args.parallel,
                                    max_keepalive_connections=args.parallel),
                timeout=httpx.Timeout(600.0, connect=5.0)),
        )
        for url in args.urls
    ]  # fmt: skip
    gates = [asyncio.Semaphore(args.parallel) for _ in args.urls]

    async def one(i: int) -> int:
        which = i % len(clients)
        client = clients[which]
        req = _payload(args.api, args.model, i, args.tokens, args.stream)
        async with gates[which]:
            endpoint = client.chat.completions if args.api == "chat" else client.completions
            response = await endpoint.create(**req)
            parts: list[str] = []
            if not args.stream:
                choice = response.choices[0]
                parts.append(choice.message.content if args.api == "chat" else choice.text)
            else:
                async for chunk in response:
                    for c in chunk.choices or ():
                        piece = c.delta.content if args.api == "chat" else c.text
                        if piece:
                            parts.append(piece)
        return len("".join(parts).split())

    results = await asyncio.gather(*(one(i) for i in range(args.requests)))
    for client in clients:
        await client.close()
    return len(results), sum(results)


async def _lean(args: argparse.Namespace) -> tuple[int, int]:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=args.parallel * len(args.urls))
    gates = [asyncio.Semaphore(args.parallel) for _ in args.urls]
    chat = args.api == "chat"
    path = "/chat/completions" if chat else "/completions"
    # Long events are read whole: aiohttp's line limit is not in the way of iter_any.
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=600)
    ) as session:

        async def one(i: int) -> int:
            which = i % len(args.urls)
            req = _payload(args.api, args.model, i, args.tokens, args.stream)
            async with gates[which], session.post(args.urls[which] + path, json=req) as resp:
                resp.raise_for_status()
                if not args.stream:
                    data = await resp.json()
                    choice = data["choices"][0]
                    text = choice["message"]["content"] if chat else choice["text"]
                    return len(text.split())
                parts: list[str] = []
                pending = b""
                async for data in resp.content.iter_any():
                    pending += data
                    *events, pending = pending.split(b"\n\n")
                    for event in events:
                        if not event.startswith(b"data: "):
                            continue
                        body = event[6:]
                        if body == b"[DONE]":
                            continue
                        obj = json.loads(body)
                        for c in obj.get("choices") or ():
                            piece = c["delta"].get("content") if chat else c.get("text")
                            if piece:
                                parts.append(piece)
                return len("".join(parts).split())

        results = await asyncio.gather(*(one(i) for i in range(args.requests)))
    return len(results), sum(results)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="client_refs")
    p.add_argument("client", choices=["sdk", "lean"])
    p.add_argument("--urls", nargs="+", required=True, help="one base URL (…/v1) a slot")
    p.add_argument("--api", choices=["chat", "completions"], default="chat")
    p.add_argument("--model", default="canned")
    p.add_argument("--requests", type=int, required=True)
    p.add_argument("--parallel", type=int, required=True, help="requests at once a slot")
    p.add_argument("--tokens", type=int, required=True, help="max_tokens asked")
    p.add_argument("--stream", action="store_true")
    args = p.parse_args(argv)
    run = _sdk if args.client == "sdk" else _lean
    ok, tokens = asyncio.run(run(args))
    print(json.dumps({"requests_ok": ok, "tokens_received": tokens}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["main"]
