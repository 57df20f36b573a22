"""Texts of the destinations: the private feed, export/import, and operator alerts."""

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        # feed
        "dest.feed.title": "AI trends: {filter}",
        "dest.feed.author": "AI Trend Notifier",
        "dest.feed.no_base": (
            "Private feeds are not set up on this bot: its operator needs to set "
            "PUBLIC_BASE_URL to the bot's public https:// address."
        ),
        "dest.feed.new": (
            "The private Atom feed of this chat's pages:\n{url}\n\n"
            "Anyone with this address can read the feed, so keep it private. "
            "{p}feed reset gives a new address and stops this one."
        ),
        "dest.feed.reset": (
            "New feed address (the old one no longer works):\n{url}\n\n"
            "Anyone with this address can read the feed, so keep it private."
        ),
        "dest.feed.exists": (
            "This chat already has a private feed. For safety its address is kept only as a "
            "fingerprint and cannot be shown again: {p}feed reset gives a new address "
            "(the old one stops working)."
        ),
        "dest.feed.empty_filter": (
            "This chat follows no tag yet, so the feed is empty; {p}subscribe TAGS fills it."
        ),
        "dest.feed.usage": "Use {p}feed, or {p}feed reset for a new address.",
        # export / import
        "dest.export.line": (
            "This chat's settings. Send {p}import with this line in another chat to apply "
            "them there:"
        ),
        "dest.import.usage": (
            'Give a line from {p}export, e.g. {p}import trendbot:1 filter="rl -robotics" '
            "mode=daily time=09:00 tz=UTC lang=en"
        ),
        "dest.import.done": "Imported.",
        "dest.import.nothing_changed": "Nothing was changed.",
        "dest.import.error.empty": "The line is empty.",
        "dest.import.error.too_long": "That line is longer than an export line can be.",
        "dest.import.error.header": (
            "“{field}” is not the start of an export line: it starts with trendbot:1."
        ),
        "dest.import.error.syntax": (
            "The line cannot be read near “{field}”: settings are written key=value, "
            "a value with spaces in double quotes."
        ),
        "dest.import.error.unknown_field": (
            "“{field}” is not a setting; a line may have: {fields}."
        ),
        "dest.import.error.duplicate_field": "The setting {field} appears twice.",
        "dest.import.error.missing_field": "The setting {field} is missing.",
        "dest.import.error.bad_value": "{field}=“{value}” is not valid.",
        "dest.import.bad.filter": (
            "filter=“{value}” is not a filter: tags of letters, digits, - _ and ., "
            "+tag (required), -tag (excluded) or *."
        ),
        "dest.import.bad.mode": "mode=“{value}” is not a mode; accepted: {accepted}.",
        "dest.import.bad.time": "time=“{value}” is not a 24-hour time HH:MM, e.g. 09:00.",
        "dest.import.bad.tz": "tz=“{value}” is not an IANA time zone such as Asia/Seoul.",
        "dest.import.bad.lang": "lang=“{value}” is not a language; accepted: en, ko.",
        # alerts
        "dest.alerts.on": (
            "Operator alerts are on in this chat: one message when an incident starts and "
            "one when it ends."
        ),
        "dest.alerts.off": "Operator alerts are off in this chat. {p}alerts on turns them on.",
        "dest.alerts.usage": "Use {p}alerts on or {p}alerts off. Now: {state}.",
        "dest.alerts.state.on": "on",
        "dest.alerts.state.off": "off",
        "dest.alerts.private_only": (
            "Alerts come to an admin's private chat with the bot: send {p}alerts there."
        ),
        "dest.alerts.none_for_workspace": (
            "Operator alerts (failing sources, sends or tokens, a stuck queue) concern the "
            "whole bot and go only to the bot's admins (SLACK_ADMIN_IDS). As this workspace's "
            "admin you see its chats and deliveries with stats; nothing was turned on."
        ),
        "dest.alerts.none_for_console": (
            "Operator alerts go to the admins' private chats on Telegram and Slack, never to "
            "the console; nothing was turned on. Check the bot with trendbot stats and /healthz."
        ),
        "dest.alert.start.source": (
            "🚨 Incident: the source {name} is failing (failed polls in a row: {count}).\n"
            "Last error: {error}"
        ),
        "dest.alert.clear.source": "✅ Resolved: the source {name} was polled successfully again.",
        "dest.alert.start.sends": (
            "🚨 Incident: {percent}% of sends to {platform} failed in the last 15 minutes "
            "(failed: {failed}, tried: {total})."
        ),
        "dest.alert.clear.sends": (
            "✅ Resolved: sends to {platform} succeed again ({percent}% failed in the last "
            "15 minutes)."
        ),
        "dest.alert.start.queue": (
            "🚨 Incident: the oldest queued message has waited {minutes} min "
            "(messages queued now: {depth})."
        ),
        "dest.alert.clear.queue": (
            "✅ Resolved: the queue is moving again (the oldest message has waited {minutes} min)."
        ),
        "dest.alert.start.auth": (
            "🚨 Incident: {platform} rejects the bot's credentials ({reason}). "
            "Check the token in the bot's configuration."
        ),
        "dest.alert.clear.auth": "✅ Resolved: {platform} accepts the bot's credentials again.",
    },
    "ko": {
        # feed
        "dest.feed.title": "AI 트렌드: {filter}",
        "dest.feed.author": "AI Trend Notifier",
        "dest.feed.no_base": (
            "이 봇에는 개인 피드가 설정되어 있지 않습니다. 운영자가 PUBLIC_BASE_URL 설정값에 "
            "봇의 공개 https:// 주소를 지정해야 합니다."
        ),
        "dest.feed.new": (
            "이 채팅이 받는 페이지의 개인 Atom 피드 주소입니다:\n{url}\n\n"
            "이 주소를 아는 사람은 누구나 피드를 읽을 수 있으니 공유하지 마세요. "
            "{p}feed reset 명령어로 새 주소를 받으면 이 주소는 더 이상 쓸 수 없습니다."
        ),
        "dest.feed.reset": (
            "새 피드 주소입니다 (이전 주소는 더 이상 쓸 수 없습니다):\n{url}\n\n"
            "이 주소를 아는 사람은 누구나 피드를 읽을 수 있으니 공유하지 마세요."
        ),
        "dest.feed.exists": (
            "이 채팅에는 이미 개인 피드가 있습니다. 안전을 위해 주소는 지문 형태로만 저장되어 "
            "다시 보여 드릴 수 없습니다. {p}feed reset 명령어로 새 주소를 받을 수 있습니다 "
            "(이전 주소는 더 이상 쓸 수 없습니다)."
        ),
        "dest.feed.empty_filter": (
            "이 채팅은 아직 구독한 태그가 없어 피드가 비어 있습니다. "
            "{p}subscribe 명령어로 태그를 구독하세요."
        ),
        "dest.feed.usage": "{p}feed 명령어를 쓰거나, 새 주소가 필요하면 {p}feed reset 명령어를 쓰세요.",
        # export / import
        "dest.export.line": (
            "이 채팅의 설정입니다. 다른 채팅에서 이 줄과 함께 {p}import 명령어를 보내면 "
            "같은 설정이 적용됩니다:"
        ),
        "dest.import.usage": (
            "{p}export 명령어로 받은 줄을 적어 주세요. 예: {p}import trendbot:1 "
            'filter="rl -robotics" mode=daily time=09:00 tz=UTC lang=ko'
        ),
        "dest.import.done": "가져왔습니다.",
        "dest.import.nothing_changed": "아무것도 바뀌지 않았습니다.",
        "dest.import.error.empty": "빈 줄입니다.",
        "dest.import.error.too_long": "내보낸 설정 줄이라고 보기에는 너무 깁니다.",
        "dest.import.error.header": (
            "“{field}” 부분은 설정 줄의 시작이 아닙니다. 설정 줄은 trendbot:1로 시작합니다."
        ),
        "dest.import.error.syntax": (
            "“{field}” 부분 근처를 읽을 수 없습니다. 설정은 키=값 형식이며, 공백이 있는 값은 "
            "큰따옴표로 감쌉니다."
        ),
        "dest.import.error.unknown_field": (
            "“{field}” 항목은 없는 설정입니다. 쓸 수 있는 설정: {fields}"
        ),
        "dest.import.error.duplicate_field": "{field} 설정이 두 번 나옵니다.",
        "dest.import.error.missing_field": "{field} 설정이 빠졌습니다.",
        "dest.import.error.bad_value": "{field}=“{value}” 값이 올바르지 않습니다.",
        "dest.import.bad.filter": (
            "filter=“{value}” 값은 필터가 아닙니다. 문자, 숫자와 - _ . 기호로 된 태그, "
            "+태그 (필수), -태그 (제외), 모든 페이지를 뜻하는 * 기호를 쓸 수 있습니다."
        ),
        "dest.import.bad.mode": "mode=“{value}” 값은 방식이 아닙니다. 쓸 수 있는 값: {accepted}",
        "dest.import.bad.time": "time=“{value}” 값은 24시간제 HH:MM 형식의 시각이 아닙니다. 예: 09:00",
        "dest.import.bad.tz": "tz=“{value}” 값은 IANA 시간대가 아닙니다. 예: Asia/Seoul",
        "dest.import.bad.lang": "lang=“{value}” 값은 언어가 아닙니다. 쓸 수 있는 값: en, ko",
        # alerts
        "dest.alerts.on": (
            "이 채팅에서 운영 알림이 켜졌습니다. 장애가 시작될 때와 끝날 때 메시지를 한 번씩 "
            "보내 드립니다."
        ),
        "dest.alerts.off": "이 채팅에서 운영 알림을 껐습니다. {p}alerts on 명령어로 다시 켭니다.",
        "dest.alerts.usage": "{p}alerts on 또는 {p}alerts off 명령어를 쓰세요. 지금 상태: {state}",
        "dest.alerts.state.on": "켜짐",
        "dest.alerts.state.off": "꺼짐",
        "dest.alerts.private_only": (
            "알림은 관리자와 봇의 개인 채팅으로 옵니다. 그 채팅에서 {p}alerts 명령어를 보내세요."
        ),
        "dest.alerts.none_for_workspace": (
            "운영 알림(소스·발송·토큰 장애, 멈춘 대기열)은 봇 전체에 관한 것이라 봇 관리자"
            "(SLACK_ADMIN_IDS)에게만 갑니다. 이 워크스페이스의 관리자는 stats 명령어로 이 "
            "워크스페이스의 채팅과 발송을 볼 수 있습니다. 아무것도 켜지 않았습니다."
        ),
        "dest.alerts.none_for_console": (
            "운영 알림은 텔레그램과 슬랙의 관리자 개인 채팅으로만 가고 콘솔로는 오지 않습니다. "
            "아무것도 켜지 않았습니다. 봇 상태는 trendbot stats와 /healthz로 확인하세요."
        ),
        "dest.alert.start.source": (
            "🚨 장애: 소스 {name} 수집이 실패하고 있습니다 (연속 실패 횟수: {count}).\n"
            "마지막 오류: {error}"
        ),
        "dest.alert.clear.source": "✅ 해소: 소스 {name} 수집이 다시 성공했습니다.",
        "dest.alert.start.sends": (
            "🚨 장애: 최근 15분 동안 {platform} 플랫폼 발송의 {percent}%가 실패했습니다 "
            "(실패 {failed}건, 시도 {total}건)."
        ),
        "dest.alert.clear.sends": (
            "✅ 해소: {platform} 플랫폼 발송이 다시 성공합니다 (최근 15분 실패율 {percent}%)."
        ),
        "dest.alert.start.queue": (
            "🚨 장애: 가장 오래된 대기 메시지가 {minutes}분째 기다리고 있습니다 "
            "(지금 대기 중인 메시지 {depth}건)."
        ),
        "dest.alert.clear.queue": (
            "✅ 해소: 대기열이 다시 처리되고 있습니다 (가장 오래된 메시지 대기 시간 {minutes}분)."
        ),
        "dest.alert.start.auth": (
            "🚨 장애: {platform} 플랫폼이 봇의 인증 정보를 거부합니다 ({reason}). "
            "봇 설정의 토큰을 확인하세요."
        ),
        "dest.alert.clear.auth": "✅ 해소: {platform} 플랫폼이 다시 봇의 인증 정보를 받아들입니다.",
    },
}
