"""Texts only the Slack channel shows, in English and Korean."""

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "slack.invite_hint": "I am not a member of this channel, so deliveries here are paused. Invite me with /invite @{bot}, then use {p}resume.",
        "slack.invite_hint_unnamed": "I am not a member of this channel, so deliveries here are paused. Invite me with /invite and my name, then use {p}resume.",
    },
    "ko": {
        "slack.invite_hint": "이 채널의 멤버가 아니어서 이곳으로의 발송이 일시 중지되었습니다. /invite @{bot} 명령어로 초대한 뒤 {p}resume을 입력해 주세요.",
        "slack.invite_hint_unnamed": "이 채널의 멤버가 아니어서 이곳으로의 발송이 일시 중지되었습니다. /invite 명령어와 제 이름으로 초대한 뒤 {p}resume을 입력해 주세요.",
    },
}
