"""Replies of the admin commands (broadcast, stats), in English and Korean."""

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "admin.broadcast.usage": (
            "Write the message after the command, e.g. {p}broadcast The digest moves to 10:00 "
            "tomorrow.\nOptions before the text: --tag TAG (repeatable), --platform "
            "telegram|slack, --lang en|ko."
        ),
        "admin.broadcast.bad_option": "“{option}” needs a valid value: {accepted}.",
        "admin.broadcast.preview": (
            "Broadcast preview — this exact text goes to {reach} chats"
            " ({skipped} paused or inactive chats are skipped):"
        ),
        "admin.broadcast.audience": "Audience: {audience}",
        "admin.broadcast.everyone": "every active chat",
        "admin.broadcast.send": "Send",
        "admin.broadcast.cancel": "Cancel",
        "admin.broadcast.queued": "Broadcast #{id} is on its way to {count} chats. You will get a report when it is done.",
        "admin.broadcast.cancelled": "Broadcast #{id} cancelled; nothing was sent.",
        "admin.broadcast.not_pending": "Broadcast #{id} is not waiting for confirmation ({status}); nothing more is sent.",
        "admin.broadcast.unknown": "There is no such broadcast.",
        "admin.broadcast.report": "Broadcast #{id} finished: {sent} sent, {failed} failed, {skipped} skipped.",
        "admin.broadcast.report_failures": "Failures: {reasons}",
        "admin.stats.header": "Bot statistics",
        "admin.stats.chats": "Chats: {summary}",
        "admin.stats.no_chats": "Chats: none yet",
        "admin.stats.tags": "Top tags by chats: {tags}",
        "admin.stats.pages": "Pages in the wiki: {count} ({new} new today)",
        "admin.stats.deliveries": "Last 24 h: {sent} sent, {failed} failed; {queued} queued now",
        "admin.stats.failures": "Top failure reasons: {reasons}",
        "admin.stats.source": "Source {name}: last poll {when}{error}",
        "admin.stats.source_error": ", error: {error}",
        "admin.stats.never": "never",
        "admin.stats.broadcast": "Broadcast #{id} in progress: {sent} sent, {failed} failed, {pending} pending of {total}",
        "admin.none": "none",
    },
    "ko": {
        "admin.broadcast.usage": (
            "명령어 뒤에 보낼 내용을 적어 주세요. 예: {p}broadcast 내일부터 요약이 10:00 에 옵니다.\n"
            "내용 앞에 쓸 수 있는 옵션: --tag 태그 (여러 번), --platform telegram|slack, --lang en|ko"
        ),
        "admin.broadcast.bad_option": "“{option}” 에는 올바른 값이 필요합니다: {accepted}",
        "admin.broadcast.preview": (
            "공지 미리보기 — 아래 내용 그대로 {reach}개 채팅에 보냅니다"
            " (일시 중지되었거나 비활성인 채팅 {skipped}개는 건너뜁니다):"
        ),
        "admin.broadcast.audience": "대상: {audience}",
        "admin.broadcast.everyone": "활성 상태인 모든 채팅",
        "admin.broadcast.send": "보내기",
        "admin.broadcast.cancel": "취소",
        "admin.broadcast.queued": "공지 #{id} 을(를) {count}개 채팅에 보내는 중입니다. 끝나면 결과를 알려 드립니다.",
        "admin.broadcast.cancelled": "공지 #{id} 을(를) 취소했습니다. 아무것도 보내지 않았습니다.",
        "admin.broadcast.not_pending": "공지 #{id} 은(는) 확인을 기다리는 상태가 아닙니다 ({status}). 더 보내지 않습니다.",
        "admin.broadcast.unknown": "그런 공지가 없습니다.",
        "admin.broadcast.report": "공지 #{id} 완료: {sent}개 보냄, {failed}개 실패, {skipped}개 건너뜀.",
        "admin.broadcast.report_failures": "실패 사유: {reasons}",
        "admin.stats.header": "봇 통계",
        "admin.stats.chats": "채팅: {summary}",
        "admin.stats.no_chats": "채팅: 아직 없음",
        "admin.stats.tags": "구독 채팅이 많은 태그: {tags}",
        "admin.stats.pages": "위키 페이지: {count}개 (오늘 새로 {new}개)",
        "admin.stats.deliveries": "최근 24시간: {sent}개 보냄, {failed}개 실패; 지금 대기 {queued}개",
        "admin.stats.failures": "주요 실패 사유: {reasons}",
        "admin.stats.source": "소스 {name}: 마지막 수집 {when}{error}",
        "admin.stats.source_error": ", 오류: {error}",
        "admin.stats.never": "없음",
        "admin.stats.broadcast": "진행 중인 공지 #{id}: {total}개 중 {sent}개 보냄, {failed}개 실패, {pending}개 대기",
        "admin.none": "없음",
    },
}
