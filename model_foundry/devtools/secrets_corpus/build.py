"""The corpus for a seed."""

from __future__ import annotations

from model_foundry.devtools.secrets_corpus.contexts import _GENERIC, _ctx_header
from model_foundry.devtools.secrets_corpus.files import (
    _aws_credentials,
    _docker_config,
    _env_dump,
    _git_credentials,
    _git_remote,
    _k8s_secret_multi,
    _kubeconfig,
    _netrc,
    _npmrc,
    _pem_cases,
    _pgpass,
    _pip_conf,
    _pypirc,
)
from model_foundry.devtools.secrets_corpus.generator import _Gen
from model_foundry.devtools.secrets_corpus.kinds import KIND_BY_NAME, TOKEN_KINDS
from model_foundry.devtools.secrets_corpus.model import Case
from model_foundry.devtools.secrets_corpus.services import _password_cases


def corpus(seed: int = 7) -> list[Case]:
    """The cases for ``seed``: the same seed always gives the same list."""
    g = _Gen(seed)
    for k in TOKEN_KINDS:
        # a kind that never goes in a header is not put in one
        fitting = [ctx for ctx in _GENERIC if k.header or ctx is not _ctx_header]
        for ctx in g.rng.sample(fitting, 4):
            ctx(g, k)
    for name in ("session_cookie", "opaque_api_key", "gitlab_pat", "openai_project_key"):
        _ctx_header(g, KIND_BY_NAME[name])  # Cookie:, X-Api-Key:, PRIVATE-TOKEN:, Bearer
    _password_cases(g)
    for builder, times in (
        (_aws_credentials, 6),
        (_netrc, 4),
        (_pgpass, 4),
        (_npmrc, 4),
        (_pypirc, 3),
        (_pip_conf, 4),
        (_git_credentials, 4),
        (_git_remote, 3),
        (_kubeconfig, 4),
        (_docker_config, 4),
        (_k8s_secret_multi, 5),
    ):
        for _ in range(times):
            builder(g)
    _pem_cases(g)
    for _ in range(12):
        _env_dump(g)
    return g.cases
