"""Texts of the charts some replies carry (alt text, captions, titles), in English and Korean."""

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "charts.stats.alt": "Chart: messages sent per day over the last {days} days, and the tags most chats follow.",
        "charts.stats.sends": "Messages sent per day (UTC)",
        "charts.stats.tags": "Chats following each tag",
        "charts.stats.followers": "Chats following the top tags, by day",
        "charts.stats.alt_followers": "Chart: messages sent per day over the last {days} days, the tags most chats follow, and how many chats followed the top tags on each of the last {trend_days} days.",
        "charts.feedback.alt": "Chart: the tag weights this chat's 👍 and 👎 taught the ranking; liked tags to the right, disliked to the left.",
        "charts.feedback.title": "Learned tag weights: liked (right), disliked (left)",
    },
    "ko": {
        "charts.stats.alt": "차트: 최근 {days}일 동안의 일별 발송 수와 구독이 가장 많은 태그.",
        "charts.stats.sends": "일별 발송 수 (UTC)",
        "charts.stats.tags": "태그별 구독 채팅 수",
        "charts.stats.followers": "상위 태그의 일별 구독 채팅 수",
        "charts.stats.alt_followers": "차트: 최근 {days}일 동안의 일별 발송 수, 구독이 가장 많은 태그, 그리고 최근 {trend_days}일 동안 상위 태그를 구독한 채팅 수의 일별 추이.",
        "charts.feedback.alt": "차트: 이 채팅의 👍·👎 투표로 학습된 태그 가중치. 선호하는 태그는 오른쪽, 선호하지 않는 태그는 왼쪽에 있습니다.",
        "charts.feedback.title": "학습된 태그 가중치: 선호(오른쪽), 비선호(왼쪽)",
    },
}
