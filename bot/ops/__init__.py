"""Operation: what runs beside the flow in a service. The HTTP server (``web``), leases
between replicas (``leader``), the operators' alerts (``alert_service``, deciding by the rules
of ``bot.rules.alerts``), the push hook that polls a source at once (``refresh``), the private
feeds' server (``feed_server``).
"""

# Nothing is taken from the package itself: its modules are imported by name.
__all__: list[str] = []
