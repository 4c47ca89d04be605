"""Real-browser end-to-end tests: JupyterLab and exported pages in headless Chromium."""
