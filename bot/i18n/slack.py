"""Texts only the Slack channel shows, in English and Korean."""

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "slack.invite_hint": "I am not a member of this channel, so deliveries here are paused. Invite me with /invite @{bot}, then use {p}resume.",
        "slack.invite_hint_unnamed": "I am not a member of this channel, so deliveries here are paused. Invite me with /invite and my name, then use {p}resume.",
        "slack.where_subscriptions_work": "I cannot post here: Slack lets apps into direct messages between people and group DMs only when invited, and subscriptions need a place I can post to. Use {p}subscribe in a channel I am a member of (any public channel, or a private one after /invite), or in your direct messages with me (my Messages tab under Apps).",
        "slack.invite_first": "I am not a member of this private channel, so I cannot post here. Invite me with /invite @{bot}, then run the command again; nothing was changed.",
        "slack.invite_first_unnamed": "I am not a member of this private channel, so I cannot post here. Invite me with /invite and my name, then run the command again; nothing was changed.",
    },
    "ko": {
        "slack.invite_hint": "이 채널의 멤버가 아니어서 이곳으로의 발송이 일시 중지되었습니다. /invite @{bot} 명령어로 초대한 뒤 {p}resume을 입력해 주세요.",
        "slack.invite_hint_unnamed": "이 채널의 멤버가 아니어서 이곳으로의 발송이 일시 중지되었습니다. /invite 명령어와 제 이름으로 초대한 뒤 {p}resume을 입력해 주세요.",
        "slack.where_subscriptions_work": "이곳에는 글을 올릴 수 없습니다. 구독은 제가 글을 올릴 수 있는 곳에서만 동작합니다. 제가 멤버인 채널(모든 공개 채널, 또는 /invite 명령으로 초대한 비공개 채널)이나 저와의 다이렉트 메시지(앱 아래의 메시지 탭)에서 {p}subscribe 명령을 사용해 주세요.",
        "slack.invite_first": "이 비공개 채널의 멤버가 아니어서 이곳에는 글을 올릴 수 없습니다. /invite @{bot} 명령으로 초대한 뒤 명령을 다시 실행해 주세요. 아무것도 바뀌지 않았습니다.",
        "slack.invite_first_unnamed": "이 비공개 채널의 멤버가 아니어서 이곳에는 글을 올릴 수 없습니다. /invite 명령과 제 이름으로 초대한 뒤 명령을 다시 실행해 주세요. 아무것도 바뀌지 않았습니다.",
    },
}
