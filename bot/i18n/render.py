"""Labels used by the digest renderers."""

_MONTHS_EN = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "render.header": "📚 AI trends · {date} · {pages}",
        "render.instant_header": "🆕 New in AI trends",
        "render.pages.one": "{count} page",
        "render.pages.other": "{count} pages",
        "render.date": "{day} {month} {year}",
        **{f"render.month.{i}": name for i, name in enumerate(_MONTHS_EN, start=1)},
        "render.updated": "🔄 updated",
        "render.matched": "matched: {tags}",
        "render.lang_note.en": "(in English)",
        "render.lang_note.ko": "(in Korean)",
        "render.lang_note.other": "(in {lang})",
        "render.part": "({index}/{total})",
        "render.top": "Top {count}:",
        "render.thread_hint": "All {count} pages are in the thread.",
        "render.more": "…and {count} more",
        "render.arxiv": "arXiv {id}",
    },
    "ko": {
        "render.header": "📚 AI 트렌드 · {date} · {pages}",
        "render.instant_header": "🆕 AI 트렌드 새 소식",
        "render.pages.one": "페이지 {count}개",
        "render.pages.other": "페이지 {count}개",
        "render.date": "{year}년 {month} {day}일",
        **{f"render.month.{i}": f"{i}월" for i in range(1, 13)},
        "render.updated": "🔄 업데이트됨",
        "render.matched": "일치한 태그: {tags}",
        "render.lang_note.en": "(영어)",
        "render.lang_note.ko": "(한국어)",
        "render.lang_note.other": "({lang})",
        "render.part": "({index}/{total})",
        "render.top": "주요 {count}개:",
        "render.thread_hint": "전체 {count}개 페이지는 스레드에서 볼 수 있습니다.",
        "render.more": "…외 {count}개",
        "render.arxiv": "arXiv {id}",
    },
}
