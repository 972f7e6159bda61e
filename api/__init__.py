"""The canasta-scan web service: FastAPI routes, persistence and the web page."""
