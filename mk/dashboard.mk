# The dashboard (internal/service/web): its browser test keeps a screenshot of each page under
# build/dashboard/ (a CI artifact); this target also rewrites the README's screenshot.
.PHONY: dashboard-screenshot
dashboard-screenshot: ## regenerate docs/dashboard.png, the README's screenshot, in headless chromium
	$(GO) test ./internal/service/web -run TestDashboardInBrowser -count=1 -args -update-screenshot
