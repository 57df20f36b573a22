"""AI Trend Notifier: TL;DR digests of new AI research wiki pages, for Telegram and Slack."""

__version__ = "0.1.0"
