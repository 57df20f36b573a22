"""Replies of the chat commands, in English and Korean."""

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "cmd.greeting": "Hi! I post short TL;DRs of new AI research pages that match your tags.",
        "cmd.help": (
            "Commands:\n"
            "{p}subscribe TAGS — follow tags: rl reasoning, +required, -excluded, * for all\n"
            "{p}unsubscribe TAGS | all — stop following tags, or everything\n"
            "{p}tags — tags known from the wiki, with page counts\n"
            "{p}settings — what this chat receives and when\n"
            "{p}mode daily | instant — one digest a day, or a message per page\n"
            "{p}time HH:MM — local time of the daily digest\n"
            "{p}timezone ZONE — e.g. Asia/Seoul\n"
            "{p}lang en | ko — language of replies and pages\n"
            "{p}pause | {p}resume — stop or restart deliveries\n"
            "{p}latest [N] — the newest N matching pages now\n"
            "{p}digest — send the pending digest now"
        ),
        "cmd.help_admin": (
            "Admin:\n"
            "{p}broadcast TEXT — send a message to every chat (with a preview)\n"
            "{p}stats — chats, tags and deliveries"
        ),
        "cmd.settings": (
            "Settings for this chat:\n"
            "Filter: {filter}\n"
            "Mode: {mode}\n"
            "Digest time: {time} ({timezone})\n"
            "Language: {lang}\n"
            "Deliveries: {state}"
        ),
        "cmd.mode.daily": "daily digest",
        "cmd.mode.instant": "a message per new page",
        "cmd.state.active": "on",
        "cmd.state.paused": "paused",
        "cmd.state.inactive": "off (the bot could not reach this chat; use resume)",
        "cmd.lang.en": "English",
        "cmd.lang.ko": "Korean",
        "filter.none": "nothing yet — try {p}subscribe rl reasoning",
        "filter.everything": "every page",
        "filter.any": "any of {tags}",
        "filter.required": "must have {tags}",
        "filter.excluded": "never {tags}",
        "filter.now": "Your filter now: {filter}",
        "filter.unknown_tags": "Note: no page carries {tags} yet; you will get them when one does.",
        "filter.error.empty": "Give at least one tag, e.g. {p}{command} rl reasoning.",
        "filter.error.too_long": "“{item}” is longer than 64 characters.",
        "filter.error.bad_chars": (
            "“{item}” is not a tag: use letters, digits, - _ and . (1–64 characters)."
        ),
        "filter.error.bare_sign": "“{item}” needs a tag after the sign, e.g. +rl or -robotics.",
        "filter.error.signed_star": "“{item}”: * stands alone (it means every page).",
        "filter.error.too_many": "A chat can follow at most 50 tags; nothing was changed.",
        "filter.accepted": "Accepted: tag, +tag (required), -tag (excluded), * (every page).",
        "filter.nothing_changed": "Nothing was changed.",
        "filter.not_subscribed": "This chat does not follow {tags}.",
        "unsubscribe.all": "Unsubscribed from everything. Use {p}subscribe to start again.",
        "subscribe.pick": "Tap tags to follow or unfollow them:",
        "subscribe.no_tags": "The wiki has no tags yet. Use {p}subscribe TAG to follow one.",
        "tags.header": "Tags in the wiki (pages):",
        "tags.none": "The wiki has no pages yet.",
        "mode.set.daily": "You will get one digest a day at {time} ({timezone}).",
        "mode.set.instant": "You will get a message for each new matching page.",
        "mode.usage": "Use {p}mode daily or {p}mode instant.",
        "time.set": "The daily digest now comes at {time} ({timezone}).",
        "time.usage": "Give a 24-hour time, e.g. {p}time 09:00.",
        "timezone.set": "Time zone set to {timezone}; the digest comes at {time} there.",
        "timezone.usage": "Give an IANA time zone, e.g. {p}timezone Asia/Seoul or UTC.",
        "timezone.unknown": "“{zone}” is not a time zone I know. Try Asia/Seoul, Europe/Berlin or UTC.",
        "lang.set": "I will speak English here.",
        "lang.usage": "Use {p}lang en or {p}lang ko.",
        "pause.done": "Paused. Your settings are kept; {p}resume to start again.",
        "pause.already": "Already paused. {p}resume to start again.",
        "resume.done": "Deliveries are on again (pages from the pause are skipped).",
        "resume.already": "Deliveries are already on.",
        "latest.header": "The newest {count} pages for your filter:",
        "latest.none": "No page matches your filter yet.",
        "latest.usage": "Give a number from 1 to 20, e.g. {p}latest 5.",
        "latest.no_filter": "Subscribe first, e.g. {p}subscribe rl, or try {p}latest after {p}subscribe *.",
        "digest.queued": "Sending your digest now ({count} new).",
        "digest.nothing": "Nothing new for your filter since the last digest.",
        "digest.paused": "Deliveries are paused here; {p}resume first.",
        "digest.unavailable": "Digests are not available right now; try again in a minute.",
        "cmd.unknown": "I don't know “{command}”. {p}help lists the commands.",
        "cmd.group_admins_only": ("Only this group's administrators can change its subscription."),
        "cmd.admins_only": "This command is for the bot's admins only.",
        "cmd.too_long": "That message is too long for a command.",
        "cmd.error": "Something went wrong on my side; nothing was changed. Please try again.",
        "console.hint": "Type a command such as /subscribe rl or /latest; /quit leaves.",
    },
    "ko": {
        "cmd.greeting": "안녕하세요! 구독한 태그에 맞는 새 AI 연구 페이지의 TL;DR 을 보내 드립니다.",
        "cmd.help": (
            "명령어:\n"
            "{p}subscribe 태그 — 태그 구독: rl reasoning, +필수, -제외, * 는 전체\n"
            "{p}unsubscribe 태그 | all — 태그 구독 해지, 또는 전부 해지\n"
            "{p}tags — 위키의 태그와 페이지 수\n"
            "{p}settings — 이 채팅이 받는 것과 시간\n"
            "{p}mode daily | instant — 하루 한 번 요약, 또는 페이지마다 메시지\n"
            "{p}time HH:MM — 일일 요약을 받을 현지 시각\n"
            "{p}timezone 시간대 — 예: Asia/Seoul\n"
            "{p}lang en | ko — 답장과 페이지의 언어\n"
            "{p}pause | {p}resume — 발송 일시 중지 또는 재개\n"
            "{p}latest [N] — 조건에 맞는 최신 페이지 N 개\n"
            "{p}digest — 대기 중인 요약을 지금 받기"
        ),
        "cmd.help_admin": (
            "관리자:\n"
            "{p}broadcast 내용 — 모든 채팅에 메시지 보내기 (미리보기 후)\n"
            "{p}stats — 채팅, 태그, 발송 현황"
        ),
        "cmd.settings": (
            "이 채팅의 설정:\n"
            "필터: {filter}\n"
            "방식: {mode}\n"
            "요약 시각: {time} ({timezone})\n"
            "언어: {lang}\n"
            "발송: {state}"
        ),
        "cmd.mode.daily": "하루 한 번 요약",
        "cmd.mode.instant": "새 페이지마다 메시지",
        "cmd.state.active": "켜짐",
        "cmd.state.paused": "일시 중지됨",
        "cmd.state.inactive": "꺼짐 (이 채팅에 보낼 수 없었습니다. resume 을 사용하세요)",
        "cmd.lang.en": "영어",
        "cmd.lang.ko": "한국어",
        "filter.none": "아직 없음 — {p}subscribe rl reasoning 처럼 구독해 보세요",
        "filter.everything": "모든 페이지",
        "filter.any": "다음 중 하나: {tags}",
        "filter.required": "반드시 포함: {tags}",
        "filter.excluded": "제외: {tags}",
        "filter.now": "현재 필터: {filter}",
        "filter.unknown_tags": "참고: 아직 {tags} 태그가 붙은 페이지가 없습니다. 생기면 보내 드립니다.",
        "filter.error.empty": "태그를 하나 이상 적어 주세요. 예: {p}{command} rl reasoning",
        "filter.error.too_long": "“{item}” 은(는) 64자를 넘습니다.",
        "filter.error.bad_chars": (
            "“{item}” 은(는) 태그가 아닙니다. 문자, 숫자, - _ . 만 쓸 수 있습니다 (1–64자)."
        ),
        "filter.error.bare_sign": "“{item}” 기호 뒤에 태그가 필요합니다. 예: +rl, -robotics",
        "filter.error.signed_star": "“{item}”: * 는 단독으로 씁니다 (모든 페이지라는 뜻).",
        "filter.error.too_many": "한 채팅은 태그를 최대 50개까지 구독할 수 있습니다. 아무것도 바뀌지 않았습니다.",
        "filter.accepted": "쓸 수 있는 형식: 태그, +태그 (필수), -태그 (제외), * (모든 페이지)",
        "filter.nothing_changed": "아무것도 바뀌지 않았습니다.",
        "filter.not_subscribed": "이 채팅은 {tags} 을(를) 구독하고 있지 않습니다.",
        "unsubscribe.all": "모든 구독을 해지했습니다. 다시 시작하려면 {p}subscribe 를 쓰세요.",
        "subscribe.pick": "태그를 눌러 구독하거나 해지하세요:",
        "subscribe.no_tags": "위키에 아직 태그가 없습니다. {p}subscribe 태그 로 구독하세요.",
        "tags.header": "위키의 태그 (페이지 수):",
        "tags.none": "위키에 아직 페이지가 없습니다.",
        "mode.set.daily": "매일 {time} ({timezone}) 에 요약을 한 번 보내 드립니다.",
        "mode.set.instant": "조건에 맞는 새 페이지마다 메시지를 보내 드립니다.",
        "mode.usage": "{p}mode daily 또는 {p}mode instant 를 쓰세요.",
        "time.set": "이제 일일 요약은 {time} ({timezone}) 에 옵니다.",
        "time.usage": "24시간제 시각을 적어 주세요. 예: {p}time 09:00",
        "timezone.set": "시간대를 {timezone} 로 설정했습니다. 요약은 그곳 시각 {time} 에 옵니다.",
        "timezone.usage": "IANA 시간대를 적어 주세요. 예: {p}timezone Asia/Seoul 또는 UTC",
        "timezone.unknown": "“{zone}” 은(는) 알 수 없는 시간대입니다. Asia/Seoul, Europe/Berlin, UTC 등을 써 보세요.",
        "lang.set": "이제 이 채팅에서는 한국어로 답합니다.",
        "lang.usage": "{p}lang en 또는 {p}lang ko 를 쓰세요.",
        "pause.done": "일시 중지했습니다. 설정은 그대로이며 {p}resume 으로 다시 시작합니다.",
        "pause.already": "이미 일시 중지 상태입니다. {p}resume 으로 다시 시작하세요.",
        "resume.done": "발송을 다시 시작했습니다 (중지 기간의 페이지는 건너뜁니다).",
        "resume.already": "이미 발송 중입니다.",
        "latest.header": "필터에 맞는 최신 페이지 {count}개:",
        "latest.none": "아직 필터에 맞는 페이지가 없습니다.",
        "latest.usage": "1 부터 20 사이의 숫자를 적어 주세요. 예: {p}latest 5",
        "latest.no_filter": "먼저 구독하세요. 예: {p}subscribe rl, 또는 {p}subscribe * 후 {p}latest",
        "digest.queued": "지금 요약을 보냅니다 (새 페이지 {count}개).",
        "digest.nothing": "지난 요약 이후 필터에 맞는 새 페이지가 없습니다.",
        "digest.paused": "이 채팅은 발송이 일시 중지되어 있습니다. 먼저 {p}resume 을 쓰세요.",
        "digest.unavailable": "지금은 요약을 보낼 수 없습니다. 잠시 후 다시 시도해 주세요.",
        "cmd.unknown": "“{command}” 은(는) 모르는 명령어입니다. {p}help 로 명령어를 확인하세요.",
        "cmd.group_admins_only": "이 그룹의 관리자만 구독을 바꿀 수 있습니다.",
        "cmd.admins_only": "봇 관리자만 쓸 수 있는 명령어입니다.",
        "cmd.too_long": "명령어로 보내기에는 너무 긴 메시지입니다.",
        "cmd.error": "처리 중 문제가 생겨 아무것도 바뀌지 않았습니다. 다시 시도해 주세요.",
        "console.hint": "/subscribe rl, /latest 같은 명령어를 입력하세요. /quit 로 나갑니다.",
    },
}
