"""The console channel end to end: ``trendbot console`` and ``trendbot run`` in real processes,
driven in a real terminal (tmux: a terminal emulator whose screen the test reads) and through
plain pipes, on a SQLite file and a copy of the sample wiki."""

from __future__ import annotations

import abc
import contextlib
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from bot.channels.console.chat import RULE
from bot.models import Page
from bot.sources.directory import scan_directory
from tests.conftest import ROOT
from tests.ports import free_port
from tests.waiting import wait_until_sync

pytestmark = pytest.mark.slow

WAIT = 10.0  # seconds for any expected output; a start-up takes one to two
HINT = "/quit leaves."  # the last line the console prints before its first prompt
PROMPT = "you> "
NEW_PAGE = "papers/2026/2612.00001-curriculum-rollouts.md"
NEW_PAGE_TEXT = """\
---
title: "Curriculum Rollouts for Sparse-Reward Agents"
type: paper
arxiv: "2612.00001"
created: 2026-12-01
updated: 2026-12-01
tags: [rl, exploration]
lang: en
---

## TL;DR

Ordering training tasks from short to long horizons lets a sparse-reward agent see its
first successes early; the curriculum halves the rollouts needed to reach the baseline.
"""
NEW_PAGE_TITLE = "Curriculum Rollouts for Sparse-Reward Agents"
NEW_PAGE_TLDR = "Ordering training tasks from short to long horizons"


# ---------------------------------------------------------------------- set-up


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    """A copy of the sample wiki, free to change."""
    copy = tmp_path / "wiki"
    shutil.copytree(ROOT / "bot" / "sample_wiki", copy)
    return copy


@pytest.fixture
def env(clean_env: dict[str, str], tmp_path: Path, wiki: Path) -> dict[str, str]:
    """The environment of a bot process: no chat token, a fresh SQLite file, the wiki copy."""
    clean_env.update(
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/trendbot.db",
        WIKI_SOURCES=str(wiki),
        HTTP_PORT=str(free_port()),
        LANG="C.UTF-8",
        LC_ALL="C.UTF-8",
    )
    return clean_env


def trendbot(*args: str) -> list[str]:
    """The ``trendbot`` entry point of this environment (``python -m bot`` without one)."""
    script = Path(sys.executable).with_name("trendbot")
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-m", "bot", *args]


def rl_pages(wiki: Path) -> list[Page]:
    scan = scan_directory(wiki, source=str(wiki), base_url=None, default_lang="en", known={})
    return [page for page in scan.pages if "rl" in page.tags]


def text_in(page: Page, lang: str) -> tuple[str, str]:
    """The (title, TL;DR) a chat in ``lang`` sees of the page."""
    texts = {text.lang: text for text in page.texts}
    chosen = texts.get(lang) or texts.get("en") or page.texts[0]
    return chosen.title, chosen.tldr


# ---------------------------------------------------------------------- the two ways in


class Output(abc.ABC):
    """What a bot process printed, read as it comes: ``expect`` returns the text printed since
    the previous expectation up to and including what it waited for."""

    _SHOWN = "output"  # what a failed expectation calls the text it quotes

    def __init__(self) -> None:
        self._seen = 0  # characters of the output already returned by expect

    @property
    @abc.abstractmethod
    def output(self) -> str:
        """All the output so far."""

    @abc.abstractmethod
    def _more(self, left: float) -> bool:
        """Wait up to ``left`` seconds for more output; False once there is none to wait for."""

    def expect(self, *texts: str, timeout: float = WAIT) -> str:
        """Wait until one of ``texts`` appears in new output; return that output."""
        deadline = time.monotonic() + timeout
        while True:
            out = self.output
            found = [(out.find(t, self._seen), t) for t in texts if out.find(t, self._seen) >= 0]
            if found:
                at, text = min(found)
                chunk = out[self._seen : at + len(text)]
                self._seen = at + len(text)
                return chunk
            if not self._more(deadline - time.monotonic()):
                raise AssertionError(
                    f"none of {texts!r} within {timeout} s; {self._SHOWN} so far:\n"
                    f"{out[self._seen :]}"
                )


class Session(Output):
    """A bot process and what it printed: ``send`` a line, ``expect`` text to appear, with
    terminal line ends (CRLF) made plain."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        *,
        read_fd: int,
        write: Callable[[bytes], None],
        end_input: Callable[[], None],
    ) -> None:
        self.proc = proc
        self._read_fd = read_fd
        self._write = write
        self._end_input = end_input
        super().__init__()
        self._raw = b""

    @property
    def output(self) -> str:
        return self._raw.decode("utf-8", errors="replace").replace("\r\n", "\n")

    def send(self, line: str) -> None:
        self._write(line.encode() + b"\n")

    def end_input(self) -> None:
        self._end_input()

    def _more(self, left: float) -> bool:
        return left > 0 and self._read(left)

    def _read(self, timeout: float) -> bool:
        """Read what is available; False at end of output or when nothing came in time."""
        ready, _, _ = select.select([self._read_fd], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self._read_fd, 65536)
        except OSError:  # a pty's reader gets EIO once the process has gone
            return False
        self._raw += data
        return bool(data)

    def wait(self, timeout: float = WAIT) -> int:
        """The exit code, reading (and keeping) what is still printed meanwhile."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.05)
        return self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))

    def prompt(self) -> None:
        self.expect(PROMPT)


COLUMNS = 200  # the test terminal's width: a TL;DR's first 60 characters stay on one line
EXITED = "[exited "  # what the terminal's shell prints when the bot has ended


class Terminal(Output):
    """The bot in a tmux window, as a user runs it: ``send`` types a line and waits for the
    terminal to show it typed; ``expect`` waits for text to appear on the screen (its
    scrollback included) after what was already returned."""

    _SHOWN = "screen"

    def __init__(self, tmux: list[str], target: str) -> None:
        self._tmux = tmux
        self._target = target
        super().__init__()

    def _run(self, *args: str) -> str:
        done = subprocess.run(
            [*self._tmux, *args], capture_output=True, text=True, timeout=WAIT, check=False
        )
        return done.stdout

    @property
    def output(self) -> str:
        """The whole screen and scrollback, lines as typed and printed (not as wrapped)."""
        return self._run("capture-pane", "-p", "-J", "-S", "-", "-t", self._target)

    def screen(self) -> list[str]:
        """The visible screen, line by line, trailing blanks dropped."""
        lines = self._run("capture-pane", "-p", "-t", self._target).rstrip("\n").split("\n")
        while lines and not lines[-1].strip():
            lines.pop()
        return lines

    def send(self, line: str) -> None:
        self._run("send-keys", "-t", self._target, "-l", "--", line)
        self._run("send-keys", "-t", self._target, "Enter")
        self.expect(f"{PROMPT}{line}")  # the line as the prompt accepted it

    def keys(self, *keys: str) -> None:
        self._run("send-keys", "-t", self._target, *keys)

    def typed(self, text: str) -> None:
        """Wait until the prompt's line reads ``text`` (what a key press put there)."""
        lines: list[str] = []

        def reads() -> bool:
            lines[:] = [line for line in self.screen() if line.startswith(PROMPT.rstrip())]
            return bool(lines) and lines[-1].rstrip() == f"{PROMPT}{text}".rstrip()

        wait_until_sync(reads, seconds=WAIT, what=lambda: f"the prompt {text!r}: {lines[-1:]}")

    def end_input(self) -> None:
        self.keys("C-d")  # Ctrl-D on an empty prompt: end of input

    def expect(self, *texts: str, timeout: float = WAIT) -> str:
        """Wait until one of ``texts`` appears in new output; return that output. For the
        prompt alone: what was printed until the prompt came back, empty, on the last line
        (a screen shows it without its trailing space)."""
        if texts == (PROMPT,):
            return self.reply()
        return super().expect(*texts, timeout=timeout)

    def _more(self, left: float) -> bool:
        if left < 0:
            return False
        time.sleep(0.05)  # polling the screen, with a deadline
        return True

    def prompt(self) -> None:
        """Wait for the prompt to be the last line of the screen, empty, below new output."""
        screen: list[str] = []

        def empty_prompt() -> bool:
            screen[:] = self.screen()
            fresh = self.output[self._seen :].rstrip("\n")
            return bool(screen) and screen[-1].rstrip() == PROMPT.rstrip() and "\n" in fresh

        wait_until_sync(
            empty_prompt, seconds=WAIT, what=lambda: "an empty prompt:\n" + "\n".join(screen)
        )
        out = self.output.rstrip("\n")
        self._seen = out.rfind("\n") + 1  # the prompt's line: what is typed next

    def reply(self) -> str:
        """What the bot printed for the last line sent, up to the next empty prompt."""
        start = self._seen
        self.prompt()
        return self.output[start:]

    def wait(self, timeout: float = WAIT) -> int:
        chunk = self.expect(EXITED, timeout=timeout)
        del chunk
        match = re.search(r"\[exited (\d+)\]", self.output)
        assert match is not None
        return int(match[1])


@contextlib.contextmanager
def on_terminal(args: list[str], env: dict[str, str], cwd: Path) -> Iterator[Terminal]:
    """The process in a real terminal (a tmux window on a server of its own)."""
    tmux_path = shutil.which("tmux")
    if tmux_path is None:
        pytest.skip("tmux is not installed: apt-get install tmux")
    socket_name = f"trendbot-test-{uuid.uuid4().hex[:12]}"
    config = cwd / "tmux.conf"
    config.write_text("set -g history-limit 50000\n", encoding="utf-8")
    tmux = [tmux_path, "-L", socket_name, "-f", str(config)]
    command = " ".join(
        [
            "env",
            "-i",
            *(shlex.quote(f"{k}={v}") for k, v in env.items()),
            "TERM=xterm-256color",
            *(shlex.quote(a) for a in args),
            f"; echo {shlex.quote(EXITED)}$?]; sleep 60",
        ]
    )
    subprocess.run(
        [*tmux, "new-session", "-d", "-x", str(COLUMNS), "-y", "50", "-c", str(cwd), command],
        check=True,
        timeout=WAIT,
    )
    try:
        yield Terminal(tmux, target="0")
    finally:
        subprocess.run([*tmux, "kill-server"], check=False, timeout=WAIT)


@contextlib.contextmanager
def on_pipes(args: list[str], env: dict[str, str], cwd: Path) -> Iterator[Session]:
    """The process with pipes for stdin and for stdout and stderr together."""
    proc = subprocess.Popen(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=cwd,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin: IO[bytes] = proc.stdin

    def write(data: bytes) -> None:
        stdin.write(data)
        stdin.flush()

    session = Session(proc, read_fd=proc.stdout.fileno(), write=write, end_input=stdin.close)
    try:
        yield session
    finally:
        _stop(proc)
        proc.stdout.close()
        if not stdin.closed:
            stdin.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=WAIT)


def greeted(bot: Session | Terminal) -> str:
    """Wait for the console's greeting and then its first prompt; return the greeting."""
    greeting = bot.expect(HINT)
    bot.prompt()
    return greeting


def ask(bot: Session | Terminal, line: str) -> str:
    """Send ``line``; return what was printed for it up to the next prompt."""
    bot.send(line)
    return bot.expect(PROMPT)


def quit_console(bot: Session | Terminal) -> None:
    """``/quit``, and the process ends with exit code 0."""
    bot.send("/quit")
    assert bot.wait() == 0


Driver = Callable[
    [list[str], dict[str, str], Path], contextlib.AbstractContextManager[Session | Terminal]
]


@pytest.fixture(params=[on_terminal, on_pipes], ids=["pty", "pipe"])
def bot(
    request: pytest.FixtureRequest, env: dict[str, str], tmp_path: Path
) -> Iterator[Session | Terminal]:
    """``trendbot console`` in a real terminal and on plain pipes, past its greeting."""
    drive: Driver = request.param
    with drive(trendbot("console"), env, tmp_path) as session:
        greeted(session)
        yield session


# ---------------------------------------------------------------------- trendbot console


def test_subscribe_then_latest_shows_pages_with_their_tldr(
    bot: Session | Terminal, wiki: Path
) -> None:
    greeting = bot.output.split(HINT, 1)[0]
    assert "Commands:" in greeting and "/subscribe" in greeting

    assert "Your filter now: any of rl" in ask(bot, "/subscribe rl")

    latest = ask(bot, "/latest")
    quit_console(bot)

    pages = rl_pages(wiki)
    assert f"The newest {min(5, len(pages))} pages for your filter:" in latest
    shown = [page for page in pages if text_in(page, "en")[0] in latest]
    assert len(shown) == min(5, len(pages))
    for page in shown:
        title, tldr = text_in(page, "en")
        assert tldr[:60] in latest, f"the TL;DR of {title!r} is missing"
    assert "matched: rl" in latest
    assert "<b>" not in latest and "&amp;" not in latest  # plain text, not Telegram's HTML


def test_pages_shown_are_voted_on_with_plus_and_minus_n(bot: Session | Terminal) -> None:
    assert "There is no page -1 to vote on" in ask(bot, "-1")
    ask(bot, "/subscribe rl")
    latest = ask(bot, "/latest 2")
    assert "[+1 👍] [-1 👎]" in latest and "[+2 👍] [-2 👎]" in latest
    assert "Noted: pages like this will rank lower in your digests." in ask(bot, "-2")
    undone = ask(bot, "-2")  # the same button again takes the vote back
    feedback = ask(bot, "/feedback")
    assert "Noted: pages like this will rank higher in your digests." in ask(bot, "+1")
    quit_console(bot)
    assert "Noted: pages like this will rank lower in your digests." not in undone
    assert "-1.0" not in feedback  # the 👎 was taken back: no tag learned a weight from it


def test_a_bad_command_gets_a_clear_reply_and_changes_nothing(bot: Session | Terminal) -> None:
    assert "I don't know “frobnicate”. /help lists the commands." in ask(bot, "/frobnicate now")
    not_a_time = "“25:99” is not a 24-hour time; give one such as /time 09:00."
    assert not_a_time in ask(bot, "/time 25:99")
    reply = ask(bot, "/subscribe rl +")
    assert "“+” needs a tag after the sign" in reply and "Nothing was changed." in reply
    settings = ask(bot, "/settings")
    assert "Digest time: 09:00" in settings and "nothing yet" in settings
    quit_console(bot)


def test_end_of_input_ends_the_console_with_exit_code_0(bot: Session | Terminal) -> None:
    assert "rl (" in ask(bot, "/tags")
    bot.end_input()
    assert bot.wait() == 0
    assert "Traceback" not in bot.output


def test_korean_with_lang_ko(bot: Session | Terminal, wiki: Path) -> None:
    bot.send("/subscribe rl")
    bot.prompt()
    assert "이제 이 채팅에서는 한국어로 답합니다." in ask(bot, "/lang ko")
    latest = ask(bot, "/latest 3")
    unknown = ask(bot, "/frobnicate")
    quit_console(bot)

    assert "필터에 맞는 최신 페이지 3개:" in latest
    assert "일치한 태그: rl" in latest
    shown = [page for page in rl_pages(wiki) if text_in(page, "ko")[0] in latest]
    assert len(shown) == 3
    for page in shown:
        assert text_in(page, "ko")[1][:40] in latest
    assert "“frobnicate” 명령어는 없습니다." in unknown


def test_a_page_tagged_in_korean_reaches_a_chat_subscribed_to_that_tag(
    env: dict[str, str], tmp_path: Path, wiki: Path
) -> None:
    """Tags of any script on both sides: the page's ``강화학습`` (and ``ＲＬ강화``, folded to
    ``rl강화``) is the tag the chat subscribes to, through scan, store, planner and digest."""
    page = wiki / "papers/2026/2612.00002-korean-tags.md"
    page.write_text(
        NEW_PAGE_TEXT.replace("[rl, exploration]", "[강화학습, ＲＬ강화]").replace(
            "lang: en", "lang: ko"
        ),
        encoding="utf-8",
    )
    with on_terminal(trendbot("console"), env, tmp_path) as bot:
        greeted(bot)
        subscribed = ask(bot, "/subscribe 강화학습")
        bot.send("/digest")
        bot.expect("Sending your digest now")
        digest = bot.expect(NEW_PAGE_TLDR)
        bot.prompt()
        bot.send("/unsubscribe all")
        bot.prompt()
        bot.send("/subscribe rl강화")
        bot.prompt()
        latest = ask(bot, "/latest 1")
        quit_console(bot)

    assert "강화학습" in subscribed
    assert NEW_PAGE_TITLE in digest and "matched: 강화학습" in digest
    assert NEW_PAGE_TITLE in latest and "matched: rl강화" in latest


def test_a_new_page_shows_up_in_digest_after_the_next_poll(
    env: dict[str, str], tmp_path: Path, wiki: Path
) -> None:
    """The issue's "Done when": subscribe, a page with the tag lands in the wiki, the next
    poll finds it, ``/digest`` sends it (printed as the chat would get it), and a second
    ``/digest`` has nothing new."""
    env["POLL_INTERVAL_SECONDS"] = "1"
    with on_terminal(trendbot("console"), env, tmp_path) as bot:
        greeted(bot)
        bot.send("/subscribe rl")
        bot.prompt()
        bot.send("/digest")  # the welcome digest: recent pages to get started
        bot.expect("Sending your digest now")
        bot.expect("[to console:local]")
        bot.expect(RULE)
        bot.prompt()

        page = wiki / NEW_PAGE
        page.write_text(NEW_PAGE_TEXT, encoding="utf-8")

        def in_the_digest() -> bool:
            bot.send("/digest")
            reply = bot.expect("Sending your digest now", "Nothing new for your filter")
            if "Sending your digest now" in reply:
                return True
            bot.prompt()
            return False

        # Asked again every half second: the next poll comes within a second.
        wait_until_sync(in_the_digest, seconds=WAIT, interval=0.5, what="the new page's digest")

        digest = bot.expect(NEW_PAGE_TLDR)  # printed by the delivery, around the prompt
        bot.send("/digest")
        again = bot.expect(
            "Nothing new for your filter since the last digest.", "Sending your digest now"
        )
        quit_console(bot)

    assert "[to console:local]" in digest
    assert NEW_PAGE_TITLE in digest
    assert "#rl" in digest and "matched: rl" in digest
    assert "Nothing new for your filter since the last digest." in again
    assert NEW_PAGE_TITLE not in again


# ---------------------------------------------------------------------- trendbot run


def test_run_without_a_token_on_a_terminal_opens_the_console(
    env: dict[str, str], tmp_path: Path
) -> None:
    with on_terminal(trendbot("run"), env, tmp_path) as bot:
        greeted(bot)
        assert "Your filter now: any of rl" in ask(bot, "/subscribe rl")
        assert healthz(int(env["HTTP_PORT"])) == 200  # the service runs beside the console
        quit_console(bot)


def test_run_without_a_token_and_no_terminal_runs_headless(
    env: dict[str, str], tmp_path: Path
) -> None:
    port = int(env["HTTP_PORT"])
    proc = subprocess.Popen(
        trendbot("run"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=tmp_path,
    )
    try:

        def serving() -> bool:
            assert proc.poll() is None, "run exited instead of serving"
            return healthz(port) == 200

        wait_until_sync(serving, seconds=WAIT, what="/healthz to answer 200")
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=WAIT)
    finally:
        _stop(proc)

    assert proc.returncode == 0
    text = out.decode()
    assert PROMPT not in text and "Commands:" not in text  # no console without a terminal
    assert "Traceback" not in text


def healthz(port: int) -> int:
    """The status of ``GET /healthz``; 0 while nothing listens."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as answer:
            status: int = answer.status
            return status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def test_a_number_presses_only_the_buttons_of_the_latest_reply(bot: Session | Terminal) -> None:
    """A preview's buttons scrolled 20 replies back are not pressed by their number: the
    press is refused with the reason, in the chat's language, and nothing is sent."""
    ask(bot, "/subscribe rl")  # a chat to broadcast to
    assert "[1 Send] [2 Cancel]" in ask(bot, "/broadcast Hello from long ago")
    for _ in range(20):
        ask(bot, "/tags")
    refused = ask(bot, "/press 2")
    assert "Button 2 belongs to an older message: 20 replies came after it" in refused
    assert "Run that command again for fresh buttons." in refused
    ask(bot, "/lang ko")
    refused_ko = ask(bot, "1")
    assert "1번 버튼은 이전 메시지에 있던 버튼입니다. 그 뒤에 답장이 21개 더 왔고" in refused_ko
    # The buttons of the latest reply still press: the preview shown again is sent.
    assert "[1 보내기] [2 취소]" in ask(bot, "/broadcast Hello again")
    assert "#2" in ask(bot, "1")
    quit_console(bot)
    assert "#1" not in bot.output.split("Hello again", 1)[1]


# ---------------------------------------------------------------------- a newcomer's first minute


def test_a_newcomer_gets_a_digest_presses_buttons_and_keeps_the_prompt(
    env: dict[str, str], tmp_path: Path, wiki: Path
) -> None:
    """``make run`` on a fresh database: ``/subscribe rl`` then ``/digest`` shows a digest
    with pages and their TL;DRs; the broadcast preview is confirmed and the tag picker
    toggled by typing a button's number; a delivery prints above the prompt, which is
    drawn again below it; log lines go to ./data/trendbot.log meanwhile."""
    with on_terminal(trendbot("run"), env, tmp_path) as bot:
        opening = greeted(bot)
        assert "Next digest: " in opening
        assert "log lines below WARNING go to data/trendbot.log" in bot.output

        subscribed = ask(bot, "/subscribe rl")
        assert "Your first digest comes " in subscribed and "/digest sends it now." in subscribed

        bot.send("/digest")
        bot.expect("Sending your digest now (")
        digest = bot.expect(RULE + "\n[to console:local]") + bot.expect(RULE)
        bot.prompt()  # drawn again under the delivery
        screen = bot.screen()
        assert screen[-1].rstrip() == PROMPT.rstrip() and screen[-2] == RULE

        assert "[+1 👍] [-1 👎]" in digest
        # A digest's page is voted on where it was printed.
        assert "Noted: pages like this will rank higher in your digests." in ask(bot, "+1")

        assert "rl (" in ask(bot, "/tags")  # the prompt still takes commands

        preview = ask(bot, "/broadcast Hello from the console")
        assert "[1 Send] [2 Cancel]" in preview
        confirmed = ask(bot, "1")
        assert "Broadcast #1 is on its way to 1 chat." in confirmed
        bot.expect("Broadcast #1 finished: 1 sent, 0 failed")
        bot.prompt()
        # The preview quoted it once; the delivery to this very chat printed it again.
        assert bot.output.count("Hello from the console") == 3  # typed, previewed, delivered

        picker = ask(bot, "/subscribe")
        numbers = dict(re.findall(r"\[(\d+) (?:✅ )?([\w.-]+) \(\d+\)\]", picker))
        vision = next(n for n, tag in numbers.items() if tag == "vision")
        assert "any of rl, vision" in ask(bot, f"/press {vision}")
        assert "There is no button 99" in ask(bot, "99")
        quit_console(bot)
        everything = bot.output

    pages = rl_pages(wiki)
    shown = [page for page in pages if text_in(page, "en")[0] in digest]
    assert shown, "the welcome digest shows no page"
    assert "To get you started: recent pages for your filter" in digest
    for page in shown:
        assert text_in(page, "en")[1][:40] in digest
    assert "Traceback" not in everything
    while_open = everything.split(HINT, 1)[1].split(f"{PROMPT}/quit", 1)[0]
    assert " INFO " not in while_open  # logs went to the file while the console was open
    assert "planned" in (tmp_path / "data" / "trendbot.log").read_text(encoding="utf-8")
    # Before the prompt too: the service's first lines (the leader's) go to the file.
    assert " INFO " not in everything.split(HINT, 1)[0]
    logged = (tmp_path / "data" / "trendbot.log").read_text(encoding="utf-8")
    assert "this replica is now the leader" in logged


def test_the_prompt_completes_commands_and_tags_and_keeps_history(
    env: dict[str, str], tmp_path: Path
) -> None:
    with on_terminal(trendbot("console"), env, tmp_path) as bot:
        greeted(bot)
        bot.keys("-l", "/subsc")
        bot.keys("Tab")
        bot.typed("/subscribe")
        bot.keys("-l", " -reas")
        bot.keys("Tab")
        bot.typed("/subscribe -reasoning")
        bot.keys("Enter")
        assert "Your filter now: no page (only excluded tags: reasoning)" in bot.expect(PROMPT)
        bot.keys("Up")  # the last command, recalled
        bot.typed("/subscribe -reasoning")
        bot.keys("C-u")
        bot.typed("")
        quit_console(bot)
