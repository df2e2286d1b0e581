"""The Streamlit dashboard over the published marts (`finrag dashboard`); see docs/dashboard.md."""
