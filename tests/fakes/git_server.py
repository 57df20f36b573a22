"""Git's smart HTTP on 127.0.0.1: ``git http-backend`` behind a small aiohttp server.

``git http-backend`` is git's own server side of the smart HTTP protocol, run as a CGI
program (https://git-scm.com/docs/git-http-backend): the request's method, path and
query go in CGI variables, the body on stdin, and it answers with CGI headers and the
body. This server does that translation and nothing else, so the bot's fetches meet what
a real Git host's smart HTTP answers. ``credentials`` makes it answer 401 with a Basic
challenge without them, as a private repository on a host does.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import subprocess
from pathlib import Path
from types import TracebackType

from aiohttp import web

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Wiki Editor",
    "GIT_AUTHOR_EMAIL": "editor@example.org",
    "GIT_COMMITTER_NAME": "Wiki Editor",
    "GIT_COMMITTER_EMAIL": "editor@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


class GitServer:
    """Serves every bare repository under ``root`` at ``/NAME.git``."""

    def __init__(
        self,
        root: Path,
        *,
        credentials: tuple[str, str] | None = None,
        host: str = "127.0.0.1",
        redirects: dict[str, str] | None = None,
    ) -> None:
        self.root = root
        self.credentials = credentials
        self.host = host
        # A request under a key (``/moved.git``) is answered 302 to the value (a base URL)
        # with the rest of the path and the query, as a host that moved a repository does;
        # git's client follows such a redirect of its first request unless told not to
        # (git-config(1), http.followRedirects; gitprotocol-http(5)).
        self.redirects = redirects or {}
        self.requests: list[str] = []
        # While set to an unset event, a fetch's pack request waits for it: the fetch has
        # read the refs and not yet the objects, as a slow remote holds it. (In git's
        # protocol v2 the refs come from a POST too, of ``command=ls-refs``: that one
        # passes; gitprotocol-v2(5).)
        self.hold_packs: asyncio.Event | None = None
        self.pack_held = asyncio.Event()  # set when a pack request waits on hold_packs
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def __aenter__(self) -> GitServer:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{path:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(f"{request.method} {request.path_qs}")
        for prefix, target in self.redirects.items():
            if request.path.startswith(prefix + "/"):
                location = target + request.path_qs[len(prefix) :]
                return web.Response(status=302, headers={"Location": location})
        if self.credentials is not None:
            expected = base64.b64encode(":".join(self.credentials).encode()).decode()
            if request.headers.get("Authorization") != f"Basic {expected}":
                return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="wiki"'})
        body = await request.read()
        if (
            self.hold_packs is not None
            and request.path.endswith("/git-upload-pack")
            and b"command=ls-refs" not in body
        ):
            self.pack_held.set()
            await self.hold_packs.wait()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": request.method,
            "PATH_INFO": request.path,
            "QUERY_STRING": request.query_string,
            "CONTENT_TYPE": request.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_PROTOCOL": request.headers.get("Git-Protocol", ""),
            "HTTP_GIT_PROTOCOL": request.headers.get("Git-Protocol", ""),
        }
        # A long negotiation's body comes gzipped (Content-Encoding: gzip); aiohttp has
        # inflated it already, so http-backend is handed it plain and not told otherwise.
        process = await asyncio.create_subprocess_exec(
            "git",
            "http-backend",
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, _err = await process.communicate(body)
        head, _, payload = out.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = out.partition(b"\n\n")
        status, headers = 200, {}
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name.strip():
                headers[name.strip()] = value.strip()
        return web.Response(status=status, body=payload, headers=headers)


class SilentServer:
    """A TCP server on 127.0.0.1 that accepts every connection, reads what comes, and never
    answers: a Git host that hangs. ``accepted`` is set at the first connection."""

    def __init__(self) -> None:
        self.accepted = asyncio.Event()
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> SilentServer:
        self._server = await asyncio.start_server(self._hold, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.close()
        await self._server.wait_closed()

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        self.accepted.set()
        with contextlib.suppress(ConnectionError):  # the client gave up: that is all
            while await reader.read(65536):
                pass


class Wiki:
    """A repository on the server, and a working copy to commit pages to it."""

    def __init__(self, server_root: Path, work: Path, *, name: str = "wiki") -> None:
        self.bare = server_root / f"{name}.git"
        self.work = work
        self.name = name
        git("init", "--quiet", "--bare", "--initial-branch=main", str(self.bare))
        git("init", "--quiet", "--initial-branch=main", str(work))
        git("-C", str(work), "remote", "add", "origin", str(self.bare))

    def write(self, rel: str, text: str) -> None:
        path = self.work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def write_bytes(self, rel: str, data: bytes) -> None:
        path = self.work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def tree_bomb(self, *, folders: int, pages: int, text: str) -> str:
        """Commit (and push as ``main``) a tree of ``folders`` folders under ``wiki/`` that
        all share one subtree of ``pages`` page files, all one blob: ``folders`` x
        ``pages`` paths from a few kilobytes of objects."""
        work = str(self.work)
        blob = git("-C", work, "hash-object", "-w", "--stdin", stdin=text).strip()
        entries = "".join(f"100644 blob {blob}\tp{n:05d}.md\n" for n in range(pages))
        shared = git("-C", work, "mktree", stdin=entries).strip()
        folders_tree = "".join(f"040000 tree {shared}\td{n:05d}\n" for n in range(folders))
        wiki = git("-C", work, "mktree", stdin=folders_tree).strip()
        root = git("-C", work, "mktree", stdin=f"040000 tree {wiki}\twiki\n").strip()
        commit = git("-C", work, "commit-tree", root, "-m", "a tree bomb").strip()
        git("-C", work, "push", "--quiet", "--force", "origin", f"{commit}:refs/heads/main")
        return commit

    def remove(self, rel: str) -> None:
        git("-C", str(self.work), "rm", "--quiet", rel)

    def move(self, old: str, new: str) -> None:
        (self.work / new).parent.mkdir(parents=True, exist_ok=True)
        git("-C", str(self.work), "mv", old, new)

    def commit(self, message: str, *, when: str | None = None) -> str:
        git("-C", str(self.work), "add", "--all")
        env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {}
        git("-C", str(self.work), "commit", "--quiet", "--allow-empty", "-m", message, env=env)
        git("-C", str(self.work), "push", "--quiet", "--force", "origin", "HEAD:main")
        return git("-C", str(self.work), "rev-parse", "HEAD").strip()

    def rewrite(self, message: str) -> str:
        """Replace the whole history by one new commit of the tree as it is (a rebase or
        a squash pushed with --force), then push it."""
        git("-C", str(self.work), "checkout", "--quiet", "--orphan", "rewritten")
        git("-C", str(self.work), "add", "--all")
        git("-C", str(self.work), "commit", "--quiet", "-m", message)
        git("-C", str(self.work), "branch", "--quiet", "-M", "main")
        git("-C", str(self.work), "push", "--quiet", "--force", "origin", "HEAD:main")
        return git("-C", str(self.work), "rev-parse", "HEAD").strip()


def git(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **GIT_ENV, **(env or {})},
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def git_commit_all(work: Path, bare: Path, *, message: str) -> str:
    """Commit everything under ``work`` (made a repository the first time) and push it to
    the bare repository ``bare`` (made the first time) as ``main``."""
    if not (work / ".git").exists():
        git("init", "--quiet", "--initial-branch=main", str(work))
        git("init", "--quiet", "--bare", "--initial-branch=main", str(bare))
        git("-C", str(work), "remote", "add", "origin", str(bare))
    git("-C", str(work), "add", "--all")
    git("-C", str(work), "commit", "--quiet", "-m", message)
    git("-C", str(work), "push", "--quiet", "--force", "origin", "HEAD:main")
    return git("-C", str(work), "rev-parse", "HEAD").strip()
