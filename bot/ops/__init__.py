"""Operation: what runs beside the flow in a service. The HTTP server (``web``), leases
between replicas (``leader``), the operators' alerts (``alerts``, ``alert_service``), the
push hook that polls a source at once (``refresh``), the private feeds' server
(``feed_server``).
"""
