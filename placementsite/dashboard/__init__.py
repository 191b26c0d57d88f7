"""The operator dashboard: server-rendered pages for staff users."""
