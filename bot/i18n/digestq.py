"""Replies of the digest-quality commands (weekly mode, quiet hours, limit, feedback, why)
and the texts of the feedback buttons, in English and Korean."""

_DAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_DAYS_KO = ("월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일")
_KEYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "digestq.mode.usage": (
            "Use {p}mode daily, {p}mode weekly [mon…sun] or {p}mode instant. "
            "Nothing was changed."
        ),
        "digestq.weekday.usage": (
            "“{value}” is not a day: name it as mon, tue, wed, thu, fri, sat or sun, e.g. "
            "{p}mode weekly fri. Nothing was changed."
        ),
        "digestq.limit.current": "Pages per digest: at most {count}. Change it with {p}limit N (1–{most}) or {p}limit off.",
        "digestq.limit.current_off": "Pages per digest: no limit. Set one with {p}limit N (1–{most}), e.g. {p}limit 10.",
        "digestq.quiet.current": "Quiet hours: {quiet} ({timezone}). Change them with {p}quiet HH:MM-HH:MM or turn them off with {p}quiet off.",
        "digestq.quiet.current_off": "Quiet hours are off. Set them with {p}quiet HH:MM-HH:MM, e.g. {p}quiet 22:00-07:00.",
        "digestq.mode.weekly": "You will get one digest a week: {day} at {time} ({timezone}).",
        "cmd.mode.weekly": "weekly digest",
        **{f"digestq.weekday.{k}": name for k, name in zip(_KEYS, _DAYS_EN, strict=True)},
        "digestq.limit.set": (
            "Pages per digest: at most {count}, best ranked first; the digest ends with how "
            "many more there are ({p}latest shows them)."
        ),
        "digestq.limit.off": "No limit: a digest shows every new page, best ranked first.",
        "digestq.limit.usage": "Give a number from 1 to {most}, e.g. {p}limit 10, or {p}limit off.",
        "digestq.quiet.set": (
            "Quiet hours: {quiet} ({timezone}). What falls due in them is held and sent "
            "when they end."
        ),
        "digestq.quiet.off": "Quiet hours are off.",
        "digestq.quiet.usage": (
            "Give the quiet hours as HH:MM-HH:MM in this chat's time zone, e.g. "
            "{p}quiet 22:00-07:00, or {p}quiet off. Start and end must differ."
        ),
        "digestq.feedback.header": "What this chat's 👍 and 👎 taught the ranking:",
        "digestq.feedback.none": (
            "Nothing yet: press 👍 or 👎 under a page and digests put what you like first."
        ),
        "digestq.feedback.cancelled": "The votes here cancel out: no tag is liked or disliked overall.",
        "digestq.feedback.reset_empty": "There are no votes to forget; nothing was changed.",
        "digestq.feedback.liked": "Liked: {tags}",
        "digestq.feedback.disliked": "Disliked: {tags}",
        "digestq.feedback.rule": (
            "Each 👍 adds 1 to the page's tags and each 👎 takes 1 away; a vote counts half "
            "after 30 days. {p}feedback reset forgets them."
        ),
        "digestq.feedback.usage": "Use {p}feedback or {p}feedback reset.",
        "digestq.feedback.reset_ask": (
            "Forget every 👍 and 👎 of this chat and the tag weights they taught?"
        ),
        "digestq.feedback.reset_yes": "Forget them",
        "digestq.feedback.reset_no": "Keep them",
        "digestq.feedback.reset_done": (
            "Forgotten (votes: {count}). Digests are back to the usual order."
        ),
        "digestq.feedback.reset_kept": "Kept; nothing was changed.",
        "digestq.vote.up": "Noted: more like this",
        "digestq.vote.down": "Noted: less like this",
        "digestq.vote.undone": "Vote taken back",
        "digestq.vote.gone": "That page is no longer in the wiki.",
        "digestq.vote.invalid": "That button no longer works.",
        "digestq.settings.weekly": "Weekly digest day: {day}",
        "digestq.settings.quiet": "Quiet hours: {quiet}",
        "digestq.settings.quiet_off": "Quiet hours: off",
        "digestq.settings.limit": "Pages per digest: at most {count}",
        "digestq.settings.limit_off": "Pages per digest: no limit",
        "digestq.settings.held": "Pages held by the quiet hours go out at {when}.",
        "digestq.more": "…and {count} more: {p}latest",
        "why.usage": (
            "Give a page: an arXiv id ({p}why 2608.27351), a wiki path or slug, or a link."
        ),
        "why.unknown": (
            "I don't know a page “{page}”. {p}latest shows the newest pages for your filter."
        ),
        "why.page": "“{title}”",
        "why.several": "Pages that match this: {count}; this is the newest.",
        "why.removed": "It has been removed from the wiki.",
        "why.source": "From {source}.",
        "why.copy": (
            "The same paper is also in {source}: a chat gets a paper once, as its wiki page, "
            "so what follows is about that page."
        ),
        "why.copies": (
            "The same paper is also in {sources}: a chat gets a paper once, so that copy "
            "is not sent again."
        ),
        "why.when": "{when} ({timezone})",
        "why.no_filter": "This chat follows no tags yet, so no page matches.",
        "why.match.everything": "Your filter matches it: you follow every page (*).",
        "why.match.tags": "Your filter matches it: it carries {tags}, which you follow.",
        "why.nomatch.excluded": "Your filter leaves it out: it carries {tags}, which you excluded.",
        "why.nomatch.required": "Your filter leaves it out: it lacks {tags}, which you require.",
        "why.nomatch.none": "Your filter does not match it: it carries none of {tags}.",
        "why.nomatch.both": "Your filter leaves it out: it carries {excluded}, which you excluded, and lacks {required}, which you require.",
        "why.sent.digest": "Sent {when} in the digest of {date}.",
        "why.sent.instant": "Sent {when} as a message of its own.",
        "why.left_out.sent": (
            "Counted in the “more” of the digest of {date}: your limit left it out "
            "({p}latest shows it)."
        ),
        "why.left_out.queued": (
            "It will be counted in the “more” of the digest of {date}: your limit leaves it out."
        ),
        "why.queued": "Queued: due {when}.",
        "why.failed": "Sending it failed: {reason}",
        "why.no_reason": "no reason given",
        "why.planned": "Planned for this chat {when}.",
        "why.held": "Held by the quiet hours: it goes out {when}.",
        "why.pending": "It will be in the next digest, {when}.",
        "why.pending_instant": "It goes out within a minute.",
        "why.skipped.baseline": (
            "Skipped: it was already in the wiki at the first scan, which sends nothing."
        ),
        "why.skipped.before_subscribing": (
            "Skipped: it was published before this chat subscribed ({p}latest shows it)."
        ),
        "why.skipped.filter": "So it was not sent here.",
        "why.skipped.inactive": (
            "Not sent: the bot could not reach this chat ({reason}); {p}resume turns it back on."
        ),
        "why.skipped.paused_now": "Not sent: deliveries are paused here; {p}resume restarts them.",
        "why.skipped.paused": (
            "Skipped: it came while deliveries here were paused or off, or before your "
            "filter matched it."
        ),
    },
    "ko": {
        "digestq.mode.usage": (
            "{p}mode daily, {p}mode weekly [mon…sun], {p}mode instant 중 하나를 쓰세요. "
            "아무것도 바뀌지 않았습니다."
        ),
        "digestq.weekday.usage": (
            "“{value}” 값은 요일이 아닙니다. 월~일이나 mon~sun으로 적어 주세요. "
            "예: {p}mode weekly 금. 아무것도 바뀌지 않았습니다."
        ),
        "digestq.limit.current": "요약 한 번에 페이지를 최대 {count}개까지 보여 드립니다. 바꾸려면 {p}limit N(1–{most}) 또는 {p}limit off를 쓰세요.",
        "digestq.limit.current_off": "요약에 보여 줄 페이지 수에 제한이 없습니다. 제한하려면 {p}limit N(1–{most})을 쓰세요. 예: {p}limit 10",
        "digestq.quiet.current": "방해 금지 시간: {quiet}({timezone}). 바꾸려면 {p}quiet HH:MM-HH:MM, 끄려면 {p}quiet off를 쓰세요.",
        "digestq.quiet.current_off": "방해 금지 시간이 꺼져 있습니다. 켜려면 {p}quiet HH:MM-HH:MM 형식으로 입력하세요. 예: {p}quiet 22:00-07:00",
        "digestq.mode.weekly": "매주 {day} {time}({timezone})에 요약을 보내 드립니다.",
        "cmd.mode.weekly": "주간 요약",
        **{f"digestq.weekday.{k}": name for k, name in zip(_KEYS, _DAYS_KO, strict=True)},
        "digestq.limit.set": "요약 한 번에 페이지를 최대 {count}개까지 순위가 높은 순서로 보여 드립니다. 나머지 페이지 수는 요약 끝에 알려 드리며, {p}latest 명령어로 볼 수 있습니다.",
        "digestq.limit.off": "제한을 없앴습니다. 요약에 새 페이지를 모두 순위가 높은 순서로 보여 드립니다.",
        "digestq.limit.usage": "1부터 {most} 사이의 숫자를 적어 주세요. 예: {p}limit 10 또는 {p}limit off",
        "digestq.quiet.set": "방해 금지 시간: {quiet}({timezone}). 이 시간에 보낼 페이지는 모아 두었다가 방해 금지 시간이 끝나면 보내 드립니다.",
        "digestq.quiet.off": "방해 금지 시간을 껐습니다.",
        "digestq.quiet.usage": (
            "이 채팅의 시간대 기준 HH:MM-HH:MM 형식으로 적어 주세요. "
            "예: {p}quiet 22:00-07:00 또는 {p}quiet off. 시작과 끝 시각은 달라야 합니다."
        ),
        "digestq.feedback.header": "이 채팅의 👍, 👎 투표로 매겨진 태그 점수:",
        "digestq.feedback.none": "아직 투표가 없습니다. 페이지 아래의 👍 또는 👎 버튼을 누르면 마음에 드는 페이지가 요약 앞쪽에 옵니다.",
        "digestq.feedback.cancelled": "이 채팅의 투표가 서로 상쇄되어 좋아하거나 싫어하는 태그가 없습니다.",
        "digestq.feedback.reset_empty": "초기화할 투표가 없습니다. 아무것도 바뀌지 않았습니다.",
        "digestq.feedback.liked": "좋아한 태그: {tags}",
        "digestq.feedback.disliked": "싫어한 태그: {tags}",
        "digestq.feedback.rule": "👍 한 번에 그 페이지의 태그마다 1점을 더하고, 👎 한 번에 1점을 뺍니다. 투표의 비중은 30일마다 절반으로 줄어듭니다. {p}feedback reset 명령어로 초기화할 수 있습니다.",
        "digestq.feedback.usage": "{p}feedback 또는 {p}feedback reset 명령어를 쓰세요.",
        "digestq.feedback.reset_ask": "이 채팅의 👍, 👎 투표와 그에 따라 매겨진 태그 점수를 모두 초기화할까요?",
        "digestq.feedback.reset_yes": "초기화",
        "digestq.feedback.reset_no": "그대로 두기",
        "digestq.feedback.reset_done": "초기화했습니다 (투표 {count}개). 요약은 원래 순서로 돌아갑니다.",
        "digestq.feedback.reset_kept": "그대로 두었습니다. 아무것도 바뀌지 않았습니다.",
        "digestq.vote.up": "반영했습니다: 이런 페이지를 앞으로",
        "digestq.vote.down": "반영했습니다: 이런 페이지는 뒤로",
        "digestq.vote.undone": "투표를 취소했습니다",
        "digestq.vote.gone": "그 페이지는 이제 위키에 없습니다.",
        "digestq.vote.invalid": "더 이상 쓸 수 없는 버튼입니다.",
        "digestq.settings.weekly": "주간 요약 요일: {day}",
        "digestq.settings.quiet": "방해 금지 시간: {quiet}",
        "digestq.settings.quiet_off": "방해 금지 시간: 꺼짐",
        "digestq.settings.limit": "요약당 페이지: 최대 {count}개",
        "digestq.settings.limit_off": "요약당 페이지: 제한 없음",
        "digestq.settings.held": "방해 금지 시간에 모아 둔 페이지는 {when}에 보냅니다.",
        "digestq.more": "…외 페이지 {count}개 ({p}latest 명령어로 보기)",
        "why.usage": (
            "페이지를 적어 주세요: arXiv 번호({p}why 2608.27351), 위키 경로나 슬러그, 또는 링크."
        ),
        "why.unknown": (
            "“{page}” 페이지를 찾지 못했습니다. {p}latest 명령어로 필터에 맞는 최신 페이지를 "
            "볼 수 있습니다."
        ),
        "why.page": "“{title}”",
        "why.several": "해당하는 페이지 {count}개 중 가장 최근 페이지입니다.",
        "why.removed": "위키에서 삭제된 페이지입니다.",
        "why.source": "출처: {source}",
        "why.copy": (
            "같은 논문이 {source}에도 있습니다. 논문은 채팅마다 한 번만 위키 페이지로 보내므로 "
            "아래 내용은 그 페이지에 대한 것입니다."
        ),
        "why.copies": (
            "같은 논문이 {sources}에도 있습니다. 논문은 채팅마다 한 번만 보내므로 그 사본은 "
            "다시 보내지 않습니다."
        ),
        "why.when": "{when}({timezone})",
        "why.no_filter": "이 채팅은 아직 구독한 태그가 없어서 맞는 페이지가 없습니다.",
        "why.match.everything": "모든 페이지(*)를 구독하고 있어서 필터에 맞습니다.",
        "why.match.tags": "구독한 {tags} 태그가 있어서 필터에 맞습니다.",
        "why.nomatch.excluded": "제외한 {tags} 태그가 있어서 필터에 맞지 않습니다.",
        "why.nomatch.required": "반드시 있어야 하는 {tags} 태그가 없어서 필터에 맞지 않습니다.",
        "why.nomatch.none": "구독한 {tags} 태그가 하나도 없어서 필터에 맞지 않습니다.",
        "why.nomatch.both": "제외한 {excluded} 태그가 있고, 반드시 있어야 하는 {required} 태그가 없어서 필터에 맞지 않습니다.",
        "why.sent.digest": "{date} 요약에 담아 {when}에 보냈습니다.",
        "why.sent.instant": "{when}에 단독 메시지로 보냈습니다.",
        "why.left_out.sent": (
            "페이지 수 제한 때문에 {date} 요약에는 싣지 않고, 끝에 남은 페이지 수로만 "
            "셌습니다 ({p}latest 명령어로 볼 수 있습니다)."
        ),
        "why.left_out.queued": "페이지 수 제한 때문에 {date} 요약에는 싣지 않고, 끝에 남은 페이지 수로만 셉니다.",
        "why.queued": "발송 대기 중입니다. {when}에 보낼 예정입니다.",
        "why.failed": "발송에 실패했습니다. 사유: {reason}",
        "why.no_reason": "알 수 없음",
        "why.planned": "{when}에 이 채팅으로 보낼 페이지로 정해졌습니다.",
        "why.held": "방해 금지 시간이라 보내지 않고 모아 두었습니다. {when}에 보내 드립니다.",
        "why.pending": "{when}에 보낼 다음 요약에 담깁니다.",
        "why.pending_instant": "1분 안에 보내 드립니다.",
        "why.skipped.baseline": "첫 스캔 때 이미 위키에 있던 페이지라서 건너뛰었습니다. 첫 스캔에서는 아무것도 보내지 않습니다.",
        "why.skipped.before_subscribing": "이 채팅이 구독하기 전에 올라온 페이지라서 건너뛰었습니다 ({p}latest 명령어로 볼 수 있습니다).",
        "why.skipped.filter": "그래서 이 채팅에는 보내지 않았습니다.",
        "why.skipped.inactive": "이 채팅에 보낼 수 없어서 보내지 않았습니다 ({reason}). {p}resume 명령어로 다시 켤 수 있습니다.",
        "why.skipped.paused_now": "발송이 일시 중지되어 있어서 보내지 않았습니다. {p}resume 명령어로 다시 시작하세요.",
        "why.skipped.paused": "발송이 일시 중지되었거나 꺼져 있던 동안, 또는 필터를 바꾸기 전에 올라온 페이지라서 건너뛰었습니다.",
    },
}
