"""Replies of the chat commands, in English and Korean.

Korean follows the glossary in ``bot/i18n/__init__.py``: particles attach to the word before
them (``/resume을``, ``09:00(UTC)에``), and a placeholder is followed by a fixed noun (``{tags}
태그를``) rather than by a particle that depends on its value.
"""

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "cmd.greeting": "Hi! I post short TL;DRs of new AI research pages that match your tags.",
        "cmd.help": "Commands:",
        "cmd.help_admin": "Admin:",
        "cmd.help_more": "More about one command, with examples: {p}help COMMAND",
        "line.start": "{p}start — a greeting, the commands and this chat's settings",
        "line.help": "{p}help [COMMAND] — every command, or one with examples",
        "line.subscribe": "{p}subscribe TAGS — follow tags: rl reasoning, +required, -excluded, * for every page",
        "line.unsubscribe": "{p}unsubscribe TAGS | all — stop following tags, or everything",
        "line.tags": "{p}tags — tags known from the wiki, with page counts",
        "line.settings": "{p}settings — what this chat receives and when",
        "line.mode": "{p}mode daily | weekly [mon…sun] | instant — a digest a day or a week, or a message per page",
        "line.time": "{p}time HH:MM — local time of the digest",
        "line.timezone": "{p}timezone ZONE — e.g. Asia/Seoul, KST or UTC+9",
        "line.lang": "{p}lang en | ko — language of replies and pages",
        "line.pause": "{p}pause — stop deliveries; pages published meanwhile are skipped",
        "line.resume": "{p}resume — start deliveries again",
        "line.latest": "{p}latest [N] — the newest N matching pages now",
        "line.digest": "{p}digest — send the pending digest now",
        "line.limit": "{p}limit N | off — at most N (1–50) pages a digest, best ranked first",
        "line.quiet": "{p}quiet HH:MM-HH:MM | off — quiet hours: held, then sent when they end",
        "line.feedback": "{p}feedback [reset] — what your 👍 and 👎 taught the ranking, or forget it",
        "line.why": "{p}why PAGE — arXiv id, wiki path or link: why this chat got it or not",
        "line.feed": "{p}feed [reset] — this chat's private Atom feed, or a new address for it",
        "line.export": "{p}export — this chat's settings as one line",
        "line.import": "{p}import LINE — apply such a line here (all of it or nothing)",
        "line.broadcast": "{p}broadcast TEXT — send a message to every chat (with a preview)",
        "line.stats": "{p}stats — chats, tags and deliveries",
        "line.alerts": "{p}alerts on | off — operator alerts in your private chat with me",
        "help.start": "{p}start — greets you and lists the commands with this chat's settings.",
        "help.help": "{p}help — every command. {p}help COMMAND — one command with examples, e.g. {p}help subscribe.",
        "help.subscribe": (
            "{p}subscribe TAGS — add tags to this chat's filter.\n"
            "• {p}subscribe rl reasoning — pages with rl or reasoning\n"
            "• {p}subscribe +post-training — pages must also have post-training\n"
            "• {p}subscribe -robotics — pages with robotics are left out\n"
            "• {p}subscribe * — every page (combine: {p}subscribe * -robotics)\n"
            "• {p}subscribe — tap tags to follow from a list\n"
            "A chat follows at most 50 tags; a tag is 1–64 letters, digits, - _ or ."
        ),
        "help.unsubscribe": (
            "{p}unsubscribe TAGS — remove tags from the filter, whatever their sign.\n"
            "• {p}unsubscribe robotics\n"
            "• {p}unsubscribe * — stop getting every page\n"
            "• {p}unsubscribe all — stop everything (settings are kept)"
        ),
        "help.tags": "{p}tags — the most used tags of the wiki with their page counts, e.g. rl (12).",
        "help.settings": "{p}settings — the filter, mode, time of the next digest, time zone, language and whether deliveries are paused.",
        "help.mode": (
            "{p}mode — how pages arrive.\n"
            "• {p}mode daily — one digest a day at the digest time\n"
            "• {p}mode weekly fri — one digest a week, on that day (Monday unless named)\n"
            "• {p}mode instant — a message for each new page\n"
            "• {p}mode — show the current mode"
        ),
        "help.time": (
            "{p}time HH:MM — the local time of the daily digest, 24-hour.\n"
            "• {p}time 07:30\n"
            "• {p}time — show the current time"
        ),
        "help.timezone": (
            "{p}timezone ZONE — the chat's time zone.\n"
            "• {p}timezone Asia/Seoul — an IANA name\n"
            "• {p}timezone KST, {p}timezone JST — a common abbreviation\n"
            "• {p}timezone UTC+9, {p}timezone +09:00, {p}timezone GMT-5 — a fixed offset\n"
            "• {p}timezone — show the current zone"
        ),
        "help.lang": "{p}lang en | ko — the language of replies, and of pages where both exist. {p}lang shows the current one.",
        "help.pause": "{p}pause — stop deliveries and keep the settings; {p}resume starts again.",
        "help.resume": "{p}resume — start deliveries again; pages published during the pause are skipped.",
        "help.latest": "{p}latest [N] — the newest N pages (1–20, default 5) your filter matches, now.\n• {p}latest\n• {p}latest 10",
        "help.digest": "{p}digest — send this chat's pending digest now, whatever the schedule. A chat's first digest also brings recent pages to get you started.",
        "help.broadcast": "{p}broadcast TEXT — admins only: a preview with the number of chats it reaches, then Send or Cancel.\n• {p}broadcast --tag rl The digest moves to 10:00 tomorrow.",
        "help.stats": "{p}stats — admins only: chats, subscriptions per tag, deliveries sent, failed and queued.",
        "help.limit": "{p}limit N — a digest shows at most the N (1–50) best-ranked pages and says how many more there are.\n• {p}limit 10\n• {p}limit off — every page",
        "help.quiet": "{p}quiet HH:MM-HH:MM — quiet hours in this chat's zone: what falls due in them is held and sent when they end; they may wrap midnight.\n• {p}quiet 22:00-07:00\n• {p}quiet off",
        "help.feedback": "{p}feedback — the tags this chat's 👍 and 👎 taught the ranking, with their weights.\n• {p}feedback reset — forget them (after a confirmation)",
        "help.why": "{p}why PAGE — whether this chat's filter matches a page and why, and what happened to it here. PAGE is an arXiv id, a wiki path or slug, or a link.\n• {p}why 2608.27351",
        "help.feed": "{p}feed — the address of this chat's private Atom feed of the pages its filter matches (shown once).\n• {p}feed reset — a new address; the old one stops working",
        "help.export": "{p}export — this chat's settings as one line, to keep or to apply in another chat with {p}import.",
        "help.import": '{p}import LINE — apply a line from {p}export here: all of it, or nothing when any part is wrong.\n• {p}import trendbot:1 filter="rl" mode=daily time=09:00 tz=UTC lang=en',
        "help.alerts": "{p}alerts on | off — admins only, in their private chat: operator alerts (failing sources, failing sends, a stuck queue, a refused token).",
        "help.unknown": "There is no command “{command}”. {p}help lists the commands.",
        "cmd.settings": (
            "Settings for this chat:\n"
            "Filter: {filter}\n"
            "Mode: {mode}\n"
            "Digest time: {time} ({timezone})\n"
            "Language: {lang}\n"
            "Deliveries: {state}"
        ),
        "cmd.settings.next": "Next digest: {when} ({timezone}), in {wait}",
        "cmd.settings.no_next": "Next digest: none until this chat follows a tag ({p}subscribe TAG)",
        "cmd.no_digest_yet": "Nothing will come until this chat follows a tag: {p}subscribe TAG starts.",
        "cmd.mode.daily": "daily digest",
        "cmd.mode.instant": "a message per new page",
        "cmd.state.active": "on",
        "cmd.state.paused": "paused (pages published meanwhile are skipped)",
        "cmd.state.inactive": "off (the bot could not reach this chat; use resume)",
        "cmd.lang.en": "English",
        "cmd.lang.ko": "Korean",
        "when.today": "today at {time}",
        "when.tomorrow": "tomorrow at {time}",
        "when.date": "{date} at {time}",
        "wait.days": "{days} d",
        "wait.days_hours": "{days} d {hours} h",
        "wait.hours_minutes": "{hours} h {minutes} min",
        "wait.minutes": "{minutes} min",
        "filter.none": "nothing yet — try {p}subscribe rl reasoning",
        "filter.everything": "every page",
        "filter.everything_required": "every page that has {tags}",
        "filter.first": "those with {tags} first",
        "filter.any": "any of {tags}",
        "filter.any_and": "any of {tags}",
        "filter.any_one": "any of {tags}",
        "filter.any_one_and": "any of {tags}",
        "filter.required": "must have {tags}",
        "filter.required_and": "must have {tags}",
        "filter.excluded": "never {tags}",
        "filter.join": "; ",
        "filter.sentence": "{parts}",
        "filter.except": "except {tags}",
        "filter.everything_more": "{head}, {more}",
        "filter.only_excluded": "no page (only excluded tags: {tags}); add tags or * to get pages",
        "filter.now": "Your filter now: {filter}",
        "filter.unknown_tags": "Note: no page carries {tags} yet; you will get such pages once they appear.",
        "filter.error.empty": "Give at least one tag, e.g. {p}{command} rl reasoning.",
        "filter.error.too_long": "“{item}” is longer than 64 characters.",
        "filter.error.bad_chars": (
            "“{item}” is not a tag: use letters, digits, - _ and . (1–64 characters)."
        ),
        "filter.error.bare_sign": "“{item}” needs a tag after the sign, e.g. +rl or -robotics.",
        "filter.error.signed_star": "“{item}”: * stands alone (it means every page).",
        "filter.error.too_many": "A chat can follow at most 50 tags.",
        "filter.accepted": "Accepted: tag, +tag (required), -tag (excluded), * (every page).",
        "filter.nothing_changed": "Nothing was changed.",
        "filter.not_subscribed": "This chat does not follow {tags}.",
        "unsubscribe.all": "Unsubscribed from everything. Use {p}subscribe to start again.",
        "unsubscribe.nothing": "This chat follows nothing, so there was nothing to remove. {p}subscribe TAGS starts.",
        "subscribe.first_digest": "Your first digest comes {when} ({timezone}), in {wait}, with recent pages to get you started. {p}digest sends it now.",
        "subscribe.first_instant": "You will get a message for each new matching page. {p}digest sends recent pages now, to get you started.",
        "subscribe.pick": "Tap tags to follow or unfollow them:",
        "subscribe.pick_marks": "✅ followed · ➕ required · 🚫 excluded ({p}unsubscribe TAG changes a required or excluded tag)",
        "subscribe.pick_required": "“{tag}” is required (+{tag}); a tap does not change it. {p}unsubscribe {tag} removes it.",
        "subscribe.pick_excluded": "“{tag}” is excluded (-{tag}); a tap does not change it. {p}unsubscribe {tag} removes it.",
        "subscribe.no_tags": "The wiki has no tags yet. Use {p}subscribe TAG to follow one.",
        "tags.header": "Tags in the wiki (pages):",
        "tags.more.one": "…and {count} more tag.",
        "tags.more.other": "…and {count} more tags.",
        "tags.none": "The wiki has no pages yet.",
        "mode.current": "Mode: {mode}. Change it with {p}mode daily, {p}mode weekly [mon…sun] or {p}mode instant.",
        "mode.set.daily": "You will get one digest a day at {time} ({timezone}).",
        "mode.set.instant": "You will get a message for each new matching page.",
        "mode.usage": "“{value}” is not a mode; use {p}mode daily, {p}mode weekly [mon…sun] or {p}mode instant. Nothing was changed.",
        "time.current": "The daily digest comes at {time} ({timezone}). Change it with {p}time HH:MM, e.g. {p}time 07:30.",
        "time.set": "The daily digest now comes at {time} ({timezone}).",
        "time.usage": "“{value}” is not a 24-hour time; give one such as {p}time 09:00. Nothing was changed.",
        "timezone.current": "This chat's time zone is {timezone}. Change it with {p}timezone ZONE, e.g. {p}timezone Asia/Seoul.",
        "timezone.set": "Time zone set to {timezone}; the digest comes at {time} there.",
        "timezone.unknown": "“{zone}” is not a time zone I know; try Asia/Seoul, KST, UTC+9 or UTC. Nothing was changed.",
        "timezone.ambiguous": "“{zone}” names more than one time zone: use one of {candidates}. Nothing was changed.",
        "lang.current": "Replies here are in English. Change it with {p}lang en or {p}lang ko.",
        "lang.set": "I will speak English here.",
        "lang.usage": "“{value}” is not a language I speak; use {p}lang en or {p}lang ko. Nothing was changed.",
        "pause.done": "Paused. Pages published while paused are skipped, not sent later; your settings are kept. {p}resume starts again.",
        "pause.already": "Already paused; pages published meanwhile are skipped. {p}resume starts again.",
        "resume.done": "Deliveries are on again. Pages published during the pause were skipped; you get what is published from now on.",
        "resume.already": "Deliveries are already on.",
        "latest.header.one": "The newest page for your filter:",
        "latest.header.other": "The newest {count} pages for your filter:",
        "latest.none": "No page matches your filter yet.",
        "latest.usage": "Give a number from 1 to 20, e.g. {p}latest 5.",
        "latest.no_filter": "Subscribe first, e.g. {p}subscribe rl, or try {p}latest after {p}subscribe *.",
        "digest.queued.one": "Sending your digest now (1 page).",
        "digest.queued.other": "Sending your digest now ({count} pages).",
        "digest.queued_limited": "Sending your digest now: the {shown} best-ranked of {count} pages, and a count of the other {rest} at its end ({p}limit sets how many it shows).",
        "digest.nothing": "Nothing new for your filter since the last digest.",
        "digest.no_filter": "This chat follows nothing yet, so there is no digest. Try {p}subscribe rl first.",
        "digest.paused": "Deliveries are paused here; {p}resume first.",
        "digest.unavailable": "Digests are not available right now; try again in a minute.",
        "cmd.unknown": "I don't know “{command}”. {p}help lists the commands.",
        "cmd.did_you_mean": "I don't know “{command}”. Did you mean {p}{suggestion}? {p}help lists the commands.",
        "cmd.group_admins_only": ("Only this group's administrators can change its subscription."),
        "cmd.group_admins_only_digest": "Only this group's administrators can send its digest ahead of schedule; it comes as planned (see {p}settings).",
        "cmd.admins_only": "This command is for the bot's admins only.",
        "cmd.too_long": "That message is too long for a command.",
        "cmd.plain_hint": "I answer commands, such as {p}subscribe rl or {p}latest. {p}help lists them all.",
        "cmd.error": "Something went wrong on my side; nothing was changed. Please try again.",
        "console.hint": "Type a command such as /subscribe rl or /latest; a button's number presses it; +N or -N votes on page N; /quit leaves.",
        "console.log_file": "While the console is open, log lines below WARNING go to {path}.",
        "console.no_buttons": "There is no button to press now.",
        "console.no_such_vote": "There is no page {vote} to vote on: +N likes page N of the last pages shown, -N dislikes it.",
        "console.no_such_button": "There is no button {number}; press 1 to {last}.",
        "console.press_usage": "Give a button's number, e.g. /press 1.",
        "console.buttons_gone.one": "Button {number} belongs to an older message: a reply came after it, and a number presses only the buttons of the latest reply. Run that command again for fresh buttons.",
        "console.buttons_gone.other": "Button {number} belongs to an older message: {count} replies came after it, and a number presses only the buttons of the latest reply. Run that command again for fresh buttons.",
    },
    "ko": {
        "cmd.greeting": "안녕하세요! 구독한 태그에 맞는 새 AI 연구 페이지의 TL;DR을 보내 드립니다.",
        "cmd.help": "명령어:",
        "cmd.help_admin": "관리자:",
        "cmd.help_more": "명령어 하나의 설명과 예 보기: {p}help 명령어",
        "line.start": "{p}start — 인사, 명령어 목록과 이 채팅의 설정",
        "line.help": "{p}help [명령어] — 모든 명령어, 또는 명령어 하나의 설명과 예",
        "line.subscribe": "{p}subscribe 태그 — 태그 구독: rl reasoning, +필수, -제외, 모든 페이지는 *",
        "line.unsubscribe": "{p}unsubscribe 태그 | all — 태그 구독 해지, 또는 전부 해지",
        "line.tags": "{p}tags — 위키의 태그와 페이지 수",
        "line.settings": "{p}settings — 이 채팅이 받는 내용과 받는 시각",
        "line.mode": "{p}mode daily | weekly [mon…sun] | instant — 하루나 일주일에 한 번 요약, 또는 페이지마다 메시지",
        "line.time": "{p}time HH:MM — 요약을 받을 현지 시각",
        "line.timezone": "{p}timezone 시간대 — 예: Asia/Seoul, KST, UTC+9",
        "line.lang": "{p}lang en | ko — 답장과 페이지의 언어",
        "line.pause": "{p}pause — 발송 일시 중지 (그동안 올라온 페이지는 건너뜀)",
        "line.resume": "{p}resume — 발송 재개",
        "line.latest": "{p}latest [N] — 필터에 맞는 최신 페이지 N개",
        "line.digest": "{p}digest — 대기 중인 요약을 지금 받기",
        "line.limit": "{p}limit N | off — 요약 한 번에 페이지 최대 N개 (1–50), 순위가 높은 것부터",
        "line.quiet": "{p}quiet HH:MM-HH:MM | off — 방해 금지 시간: 모아 두었다가 끝나면 보냄",
        "line.feedback": "{p}feedback [reset] — 👍, 👎 투표로 매겨진 태그 점수 보기, 또는 초기화",
        "line.why": "{p}why 페이지 — arXiv 번호, 위키 경로 또는 링크: 이 채팅에 왔는지와 그 이유",
        "line.feed": "{p}feed [reset] — 이 채팅의 개인 Atom 피드, 또는 새 피드 주소",
        "line.export": "{p}export — 이 채팅의 설정을 한 줄로 보기",
        "line.import": "{p}import 설정 — 내보낸 설정 한 줄을 이 채팅에 적용 (전부 적용하거나 전혀 적용하지 않음)",
        "line.broadcast": "{p}broadcast 내용 — 모든 채팅에 공지 보내기 (미리보기 후)",
        "line.stats": "{p}stats — 채팅, 태그, 발송 현황",
        "line.alerts": "{p}alerts on | off — 봇과의 개인 채팅으로 받는 운영 알림 켜기/끄기",
        "help.start": "{p}start — 인사와 함께 명령어 목록과 이 채팅의 설정을 보여 줍니다.",
        "help.help": "{p}help — 모든 명령어. {p}help 명령어 — 명령어 하나의 설명과 예. 예: {p}help subscribe",
        "help.subscribe": (
            "{p}subscribe 태그 — 이 채팅의 필터에 태그를 더합니다.\n"
            "• {p}subscribe rl reasoning — rl 태그나 reasoning 태그가 있는 페이지\n"
            "• {p}subscribe +post-training — post-training 태그도 반드시 있어야 하는 페이지\n"
            "• {p}subscribe -robotics — robotics 태그가 있는 페이지는 제외\n"
            "• {p}subscribe * — 모든 페이지 (함께 쓰기: {p}subscribe * -robotics)\n"
            "• {p}subscribe — 목록에서 눌러 구독할 태그 고르기\n"
            "한 채팅은 태그를 50개까지 구독합니다. 태그는 문자, 숫자와 - _ . 기호로 된 1–64자입니다."
        ),
        "help.unsubscribe": (
            "{p}unsubscribe 태그 — 기호와 상관없이 필터에서 태그를 뺍니다.\n"
            "• {p}unsubscribe robotics\n"
            "• {p}unsubscribe * — 모든 페이지 받기를 그만두기\n"
            "• {p}unsubscribe all — 전부 해지 (설정은 그대로)"
        ),
        "help.tags": "{p}tags — 위키에서 많이 쓰인 태그와 페이지 수. 예: rl (12)",
        "help.settings": "{p}settings — 필터, 방식, 다음 요약 시각, 시간대, 언어, 발송 일시 중지 여부",
        "help.mode": (
            "{p}mode — 페이지를 받는 방식\n"
            "• {p}mode daily — 요약 시각에 하루 한 번 요약\n"
            "• {p}mode weekly fri — 그 요일에 일주일에 한 번 요약 (요일을 적지 않으면 월요일)\n"
            "• {p}mode instant — 새 페이지마다 메시지\n"
            "• {p}mode — 지금 방식 보기"
        ),
        "help.time": (
            "{p}time HH:MM — 일일 요약을 받을 현지 시각 (24시간제)\n"
            "• {p}time 07:30\n"
            "• {p}time — 지금 시각 설정 보기"
        ),
        "help.timezone": (
            "{p}timezone 시간대 — 이 채팅의 시간대\n"
            "• {p}timezone Asia/Seoul — IANA 이름\n"
            "• {p}timezone KST, {p}timezone JST — 흔히 쓰는 약어\n"
            "• {p}timezone UTC+9, {p}timezone +09:00, {p}timezone GMT-5 — 고정 시차\n"
            "• {p}timezone — 지금 시간대 보기"
        ),
        "help.lang": "{p}lang en | ko — 답장의 언어이자, 두 언어가 다 있는 페이지의 언어입니다. {p}lang만 쓰면 지금 언어를 보여 줍니다.",
        "help.pause": "{p}pause — 설정은 그대로 두고 발송을 멈춥니다. 다시 시작하려면 {p}resume을 쓰세요.",
        "help.resume": "{p}resume — 발송을 다시 시작합니다. 일시 중지 기간에 올라온 페이지는 건너뜁니다.",
        "help.latest": "{p}latest [N] — 필터에 맞는 최신 페이지 N개 (1–20, 기본 5개)를 지금 보여 줍니다.\n• {p}latest\n• {p}latest 10",
        "help.digest": "{p}digest — 예정 시각과 상관없이 대기 중인 요약을 지금 보냅니다. 첫 요약에는 최근 페이지도 함께 담아 보내 드립니다.",
        "help.broadcast": "{p}broadcast 내용 — 관리자 전용: 받을 채팅 수와 함께 미리보기를 보여 주고, 보내기나 취소를 누르면 처리합니다.\n• {p}broadcast --tag rl 내일부터 요약이 10:00에 옵니다.",
        "help.stats": "{p}stats — 관리자 전용: 채팅 수, 태그별 구독, 발송 성공·실패·대기 건수",
        "help.limit": "{p}limit N — 요약 한 번에 순위가 높은 페이지를 최대 N개 (1–50)만 보여 주고, 나머지 페이지 수를 알려 줍니다.\n• {p}limit 10\n• {p}limit off — 모든 페이지",
        "help.quiet": "{p}quiet HH:MM-HH:MM — 이 채팅 시간대 기준 방해 금지 시간: 그동안 예정된 발송은 모아 두었다가 끝날 때 보냅니다. 자정을 넘어도 됩니다.\n• {p}quiet 22:00-07:00\n• {p}quiet off",
        "help.feedback": "{p}feedback — 이 채팅의 👍, 👎 투표로 매겨진 태그 점수를 보여 줍니다.\n• {p}feedback reset — 확인을 받은 뒤 점수 초기화",
        "help.why": "{p}why 페이지 — 이 채팅의 필터가 그 페이지에 맞는지와 그 이유, 그리고 이 채팅에서 어떻게 되었는지 알려 줍니다. 페이지 자리에는 arXiv 번호, 위키 경로나 슬러그, 링크를 씁니다.\n• {p}why 2608.27351",
        "help.feed": "{p}feed — 이 채팅의 필터에 맞는 페이지를 담은 개인 Atom 피드 주소 (한 번만 보여 줌)\n• {p}feed reset — 새 주소 받기 (이전 주소는 더 이상 쓸 수 없음)",
        "help.export": "{p}export — 이 채팅의 설정을 한 줄로 보여 줍니다. 보관하거나 다른 채팅에서 {p}import 명령어로 적용할 수 있습니다.",
        "help.import": '{p}import 설정 — {p}export 명령어로 받은 설정 한 줄을 이 채팅에 적용합니다. 한 부분이라도 잘못되면 아무것도 바꾸지 않습니다.\n• {p}import trendbot:1 filter="rl" mode=daily time=09:00 tz=UTC lang=en',
        "help.alerts": "{p}alerts on | off — 관리자 전용, 봇과의 개인 채팅에서: 운영 알림 (소스 실패, 발송 실패, 대기열 지연, 토큰 거부) 켜기 / 끄기",
        "help.unknown": "“{command}” 명령어는 없습니다. {p}help로 명령어 목록을 확인하세요.",
        "cmd.settings": (
            "이 채팅의 설정:\n"
            "필터: {filter}\n"
            "방식: {mode}\n"
            "요약 시각: {time}({timezone})\n"
            "언어: {lang}\n"
            "발송: {state}"
        ),
        "cmd.settings.next": "다음 요약: {when}({timezone}), {wait} 후",
        "cmd.settings.no_next": "다음 요약: 없음 ({p}subscribe 태그 명령어로 태그를 구독하면 요약이 옵니다)",
        "cmd.no_digest_yet": "이 채팅은 아직 구독하는 태그가 없어서 아무것도 오지 않습니다. {p}subscribe 태그 명령어로 구독을 시작하세요.",
        "cmd.mode.daily": "일일 요약",
        "cmd.mode.instant": "새 페이지마다 메시지",
        "cmd.state.active": "켜짐",
        "cmd.state.paused": "일시 중지됨 (그동안 올라온 페이지는 건너뜀)",
        "cmd.state.inactive": "꺼짐 (이 채팅에 보낼 수 없었습니다. resume 명령어로 다시 켤 수 있습니다)",
        "cmd.lang.en": "영어",
        "cmd.lang.ko": "한국어",
        "when.today": "오늘 {time}",
        "when.tomorrow": "내일 {time}",
        "when.date": "{date} {time}",
        "wait.days": "{days}일",
        "wait.days_hours": "{days}일 {hours}시간",
        "wait.hours_minutes": "{hours}시간 {minutes}분",
        "wait.minutes": "{minutes}분",
        "filter.none": "아직 없음 — {p}subscribe rl reasoning처럼 구독해 보세요",
        "filter.everything": "모든 페이지",
        "filter.everything_required": "{tags} 태그가 있는 모든 페이지",
        "filter.first": "{tags} 태그가 있는 페이지 우선",
        "filter.any": "{tags} 태그 중 하나가 있는",
        "filter.any_and": "{tags} 태그 중 하나가 있고,",
        "filter.any_one": "{tags} 태그가 있는",
        "filter.any_one_and": "{tags} 태그가 있고,",
        "filter.required": "{tags} 태그가 반드시 있는",
        "filter.required_and": "{tags} 태그가 반드시 있으며,",
        "filter.excluded": "{tags} 태그는 없는",
        "filter.join": " ",
        "filter.sentence": "{parts} 페이지",
        "filter.except": "{tags} 태그가 있는 페이지 제외",
        "filter.everything_more": "{head}({more})",
        "filter.only_excluded": "받는 페이지 없음 (제외한 태그만 있음: {tags}). 태그나 *를 더하면 페이지를 받습니다",
        "filter.now": "현재 필터: {filter}",
        "filter.unknown_tags": "참고: 아직 {tags} 태그가 붙은 페이지가 없습니다. 그런 페이지가 올라오면 보내 드립니다.",
        "filter.error.empty": "태그를 하나 이상 적어 주세요. 예: {p}{command} rl reasoning",
        "filter.error.too_long": "“{item}” 항목이 64자를 넘습니다.",
        "filter.error.bad_chars": (
            "“{item}” 항목은 태그가 아닙니다. 문자, 숫자와 - _ . 기호만 쓸 수 있습니다 (1–64자)."
        ),
        "filter.error.bare_sign": "“{item}” 항목의 기호 뒤에 태그가 필요합니다. 예: +rl, -robotics",
        "filter.error.signed_star": "“{item}”: *는 단독으로 씁니다 (모든 페이지라는 뜻).",
        "filter.error.too_many": "한 채팅은 태그를 최대 50개까지 구독할 수 있습니다.",
        "filter.accepted": "쓸 수 있는 형식: 태그, +태그 (필수), -태그 (제외), * (모든 페이지)",
        "filter.nothing_changed": "아무것도 바뀌지 않았습니다.",
        "filter.not_subscribed": "이 채팅은 {tags} 태그를 구독하고 있지 않습니다.",
        "unsubscribe.all": "모든 구독을 해지했습니다. 다시 시작하려면 {p}subscribe를 쓰세요.",
        "unsubscribe.nothing": "이 채팅은 구독 중인 태그가 없어서 해지할 것이 없습니다. {p}subscribe 태그 명령어로 시작하세요.",
        "subscribe.first_digest": "첫 요약은 {when}({timezone})에 옵니다({wait} 후). 최근 페이지도 함께 담아 드립니다. 지금 받으려면 {p}digest를 입력하세요.",
        "subscribe.first_instant": "필터에 맞는 새 페이지가 올라올 때마다 메시지를 보내 드립니다. 최근 페이지를 지금 받으려면 {p}digest를 입력하세요.",
        "subscribe.pick": "태그를 눌러 구독하거나 해지하세요:",
        "subscribe.pick_marks": "✅ 구독 · ➕ 필수 · 🚫 제외 (필수나 제외 태그는 {p}unsubscribe 태그 명령어로 바꿉니다)",
        "subscribe.pick_required": "“{tag}” 태그는 필수(+{tag})로 설정되어 있어 눌러도 바뀌지 않습니다. 빼려면 {p}unsubscribe {tag} 명령어를 쓰세요.",
        "subscribe.pick_excluded": "“{tag}” 태그는 제외(-{tag})로 설정되어 있어 눌러도 바뀌지 않습니다. 빼려면 {p}unsubscribe {tag} 명령어를 쓰세요.",
        "subscribe.no_tags": "위키에 아직 태그가 없습니다. {p}subscribe 태그 명령어로 구독하세요.",
        "tags.header": "위키의 태그 (페이지 수):",
        "tags.more.one": "…외 태그 {count}개",
        "tags.more.other": "…외 태그 {count}개",
        "tags.none": "위키에 아직 페이지가 없습니다.",
        "mode.current": "방식: {mode}. 바꾸려면 {p}mode daily, {p}mode weekly [mon…sun], {p}mode instant 중 하나를 쓰세요.",
        "mode.set.daily": "매일 {time}({timezone})에 요약을 한 번 보내 드립니다.",
        "mode.set.instant": "필터에 맞는 새 페이지가 올라올 때마다 메시지를 보내 드립니다.",
        "mode.usage": "“{value}” 방식은 없습니다. {p}mode daily, {p}mode weekly [mon…sun], {p}mode instant 중 하나를 쓰세요. 아무것도 바뀌지 않았습니다.",
        "time.current": "일일 요약은 {time}({timezone})에 옵니다. 바꾸려면 {p}time HH:MM 형식으로 입력하세요. 예: {p}time 07:30",
        "time.set": "이제 일일 요약은 {time}({timezone})에 옵니다.",
        "time.usage": "“{value}” 값은 24시간제 시각이 아닙니다. 예: {p}time 09:00. 아무것도 바뀌지 않았습니다.",
        "timezone.current": "이 채팅의 시간대는 {timezone}입니다. 바꾸려면 {p}timezone 시간대를 쓰세요. 예: {p}timezone Asia/Seoul",
        "timezone.set": "이 채팅의 시간대를 바꿨습니다: {timezone}. 이제 요약은 이 시간대 기준 {time}에 옵니다.",
        "timezone.ambiguous": "“{zone}”에 해당하는 시간대가 여러 개입니다. {candidates} 중 하나를 쓰세요. 아무것도 바뀌지 않았습니다.",
        "timezone.unknown": "“{zone}” 시간대는 알 수 없습니다. Asia/Seoul, KST, UTC+9, UTC 등을 써 보세요. 아무것도 바뀌지 않았습니다.",
        "lang.current": "이 채팅의 답장 언어는 한국어입니다. 바꾸려면 {p}lang en 또는 {p}lang ko를 쓰세요.",
        "lang.set": "이제 이 채팅에서는 한국어로 답합니다.",
        "lang.usage": "“{value}” 언어는 지원하지 않습니다. {p}lang en 또는 {p}lang ko를 쓰세요. 아무것도 바뀌지 않았습니다.",
        "pause.done": "발송을 일시 중지했습니다. 그동안 올라온 페이지는 나중에 보내지 않고 건너뜁니다. 설정은 그대로 유지되며, {p}resume 명령어로 다시 시작할 수 있습니다.",
        "pause.already": "이미 일시 중지 상태입니다. 그동안 올라온 페이지는 건너뜁니다. 다시 시작하려면 {p}resume 명령어를 쓰세요.",
        "resume.done": "발송을 재개했습니다. 일시 중지 동안 올라온 페이지는 건너뛰었으며, 지금부터 올라오는 페이지를 보내 드립니다.",
        "resume.already": "이미 발송 중입니다.",
        "latest.header.one": "필터에 맞는 최신 페이지 1개:",
        "latest.header.other": "필터에 맞는 최신 페이지 {count}개:",
        "latest.none": "아직 필터에 맞는 페이지가 없습니다.",
        "latest.usage": "1부터 20 사이의 숫자를 적어 주세요. 예: {p}latest 5",
        "latest.no_filter": "먼저 구독하세요. 예: {p}subscribe rl, 또는 {p}subscribe * 후 {p}latest",
        "digest.queued.one": "지금 요약을 보냅니다 (페이지 1개).",
        "digest.queued.other": "지금 요약을 보냅니다 (페이지 {count}개).",
        "digest.queued_limited": "지금 요약을 보냅니다. 페이지 {count}개 중 순위가 높은 {shown}개를 보여 드리고, 나머지 {rest}개는 끝에 개수만 알려 드립니다 (보여 줄 개수는 {p}limit 명령어로 바꿀 수 있습니다).",
        "digest.nothing": "지난 요약 이후 필터에 맞는 새 페이지가 없습니다.",
        "digest.no_filter": "이 채팅은 아직 구독 중인 태그가 없어서 요약이 없습니다. 먼저 {p}subscribe rl처럼 구독하세요.",
        "digest.paused": "이 채팅은 발송이 일시 중지되어 있습니다. 먼저 {p}resume을 쓰세요.",
        "digest.unavailable": "지금은 요약을 보낼 수 없습니다. 잠시 후 다시 시도해 주세요.",
        "cmd.unknown": "“{command}” 명령어는 없습니다. 명령어 목록은 {p}help로 볼 수 있습니다.",
        "cmd.did_you_mean": "“{command}” 명령어는 없습니다. {p}{suggestion} 명령어를 찾으셨나요? 명령어 목록은 {p}help로 볼 수 있습니다.",
        "cmd.group_admins_only": "이 그룹의 관리자만 구독을 바꿀 수 있습니다.",
        "cmd.group_admins_only_digest": "예정보다 먼저 요약을 보내는 것은 이 그룹의 관리자만 할 수 있습니다. 요약은 예정대로 옵니다 ({p}settings 명령어로 확인하세요).",
        "cmd.admins_only": "봇 관리자만 쓸 수 있는 명령어입니다.",
        "cmd.too_long": "명령어로 보내기에는 너무 긴 메시지입니다.",
        "cmd.plain_hint": "명령어로 말씀해 주세요. 예: {p}subscribe rl, {p}latest. 전체 명령어는 {p}help로 볼 수 있습니다.",
        "cmd.error": "처리 중 문제가 생겨 아무것도 바뀌지 않았습니다. 다시 시도해 주세요.",
        "console.hint": "/subscribe rl, /latest 같은 명령어를 입력하세요. 버튼은 번호를 입력하면 눌립니다. +N, -N을 입력하면 N번 페이지에 투표합니다. /quit을 입력하면 나갑니다.",
        "console.log_file": "콘솔이 열려 있는 동안 WARNING 미만의 로그는 {path} 파일에 기록합니다.",
        "console.no_buttons": "지금 누를 버튼이 없습니다.",
        "console.no_such_vote": "{vote} 페이지는 없습니다. +N은 마지막으로 보여 준 페이지 중 N번 페이지에 👍, -N은 👎입니다.",
        "console.no_such_button": "{number}번 버튼은 없습니다. 1부터 {last}까지 누를 수 있습니다.",
        "console.press_usage": "버튼 번호를 적어 주세요. 예: /press 1",
        "console.buttons_gone.one": "{number}번 버튼은 이전 메시지에 있던 버튼입니다. 그 뒤에 답장이 하나 더 왔고, 번호로는 가장 최근 답장의 버튼만 누를 수 있습니다. 버튼이 필요하면 그 명령어를 다시 입력해 주세요.",
        "console.buttons_gone.other": "{number}번 버튼은 이전 메시지에 있던 버튼입니다. 그 뒤에 답장이 {count}개 더 왔고, 번호로는 가장 최근 답장의 버튼만 누를 수 있습니다. 버튼이 필요하면 그 명령어를 다시 입력해 주세요.",
    },
}
