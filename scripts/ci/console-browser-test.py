"""The operator console in a real browser (Chromium through Selenium), against a running `fitbase serve`.

Signs in as an administrator, creates a workout and finds it through the public API, imports a catalog file with one
bad record and sees the error next to that record, looks up a user and revokes one of their sessions (whose next API
call then gets 401), verifies the audit chain, saves a remote config flag and moves its rollout, sees the apps' error,
crash and leaderboard timings on the Reports page, and saves a screenshot of every page. Checks that an anonymous visitor
is sent to the sign-in page, that a non-administrator is refused, that a form posted without its CSRF token is
refused, and that the pages fit a 320 px wide window.

    python console-browser-test.py --url URL --admin EMAIL:PASSWORD --user EMAIL:PASSWORD --user-token TOKEN --out DIR
"""
import argparse
import base64
import json
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import uuid

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait


def api(url, method="GET", token=None, body=None, headers=None, form=None):
    """One HTTP call without the browser: (status, parsed JSON or text)."""
    data = None
    all_headers = dict(headers or {})
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    if body is not None:
        data = json.dumps(body).encode()
        all_headers["Content-Type"] = "application/json"
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        all_headers["Content-Type"] = "application/x-www-form-urlencoded"
    request = urllib.request.Request(url, data=data, method=method, headers=all_headers)
    try:
        with NoRedirect().open(request) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode(errors="replace")


class NoRedirectHandler(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def NoRedirect():
    return urllib.request.build_opener(NoRedirectHandler)


def session_id(access_token):
    payload = access_token.split(".")[1]
    payload += "=" * (-len(payload) % 4)
    return json.loads(base64.urlsafe_b64decode(payload))["sid"]


class ConsoleTest:
    def __init__(self, args):
        self.url = args.url.rstrip("/")
        self.admin = args.admin.split(":", 1)
        self.user = args.user.split(":", 1)
        self.user_token = args.user_token
        self.out = args.out
        os.makedirs(self.out, exist_ok=True)
        options = webdriver.ChromeOptions()
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1000"):
            options.add_argument(flag)
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium:
            options.binary_location = chromium
        driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
        self.browser = webdriver.Chrome(service=Service(driver_path), options=options)
        self.wait = WebDriverWait(self.browser, 20)
        self.checks = 0

    def check(self, condition, message):
        if not condition:
            self.shot("failure")
            raise AssertionError(message)
        self.checks += 1
        print(f"ok: {message}")

    def shot(self, name):
        path = os.path.join(self.out, f"console-{name}.png")
        self.browser.save_screenshot(path)
        return path

    def open(self, path):
        self.browser.get(self.url + path)

    def text(self):
        return self.browser.find_element(By.TAG_NAME, "body").text

    def submit(self, button, landing):
        """Clicks a form's button and waits for the answer's page: the old page must go first, since the URL may
        already hold `landing` from the form's previous save."""
        old_body = self.browser.find_element(By.TAG_NAME, "body")
        button.click()
        self.wait.until(expected_conditions.staleness_of(old_body))
        self.wait.until(expected_conditions.url_contains(landing))

    def sign_in(self, email, password):
        self.open("/console/signin")
        self.browser.find_element(By.ID, "email").send_keys(email)
        self.browser.find_element(By.ID, "password").send_keys(password)
        self.browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()

    def fits_narrow_window(self, name):
        self.browser.set_window_size(320, 900)
        width = self.browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        self.shot(f"{name}-320px")
        self.browser.set_window_size(1280, 1000)
        self.check(width[0] <= width[1], f"{name} fits a 320 px window (content {width[0]} px, window {width[1]} px)")

    def run(self):
        try:
            self.anonymous_is_sent_to_sign_in()
            self.non_admin_is_refused()
            self.admin_signs_in()
            self.workout_created_is_public()
            self.import_shows_error_next_to_record()
            self.user_session_revoked()
            self.form_without_csrf_is_refused()
            self.groups_deliveries_system()
            self.remote_config_and_reports()
            self.sign_out()
        finally:
            self.browser.quit()
        print(f"console browser test: {self.checks} checks passed; screenshots in {self.out}")

    def anonymous_is_sent_to_sign_in(self):
        self.open("/console/users")
        self.check(self.browser.current_url.endswith("/console/signin"), "an anonymous visitor is sent to the sign-in page")
        self.shot("signin")
        status, _ = api(self.url + "/console/users")
        self.check(status == 303, f"anonymous GET /console/users answers 303 (got {status})")

    def non_admin_is_refused(self):
        self.sign_in(*self.user)
        self.check("not an administrator" in self.text(), "a non-administrator's sign-in is refused")
        self.shot("refused-non-admin")
        self.check(self.browser.get_cookie("fitbase_console") is None, "a non-administrator gets no console session")
        self.open("/console")
        self.check(self.browser.current_url.endswith("/console/signin"), "a refused non-administrator is not signed in")

    def admin_signs_in(self):
        self.sign_in(*self.admin)
        self.wait.until(expected_conditions.url_to_be(self.url + "/console"))
        self.check("At a glance" in self.text(), "the administrator reaches the dashboard")
        cookie = self.browser.get_cookie("fitbase_console")
        self.check(cookie is not None and cookie.get("httpOnly") and cookie.get("sameSite") == "Strict", "the session cookie is HttpOnly and SameSite=Strict")
        self.check(len(self.browser.find_elements(By.CSS_SELECTOR, "svg.chart")) >= 3, "the dashboard draws its charts")
        self.shot("dashboard")
        self.fits_narrow_window("dashboard")

    def workout_created_is_public(self):
        title = f"Browser Ladder {uuid.uuid4().hex[:6]}"
        self.open("/console/catalog/new")
        self.browser.find_element(By.ID, "title").send_keys(title)
        self.browser.find_element(By.ID, "description").send_keys("Made in the console by the browser test.")
        Select(self.browser.find_element(By.ID, "type")).select_by_value("hiitStrength")
        minutes = self.browser.find_element(By.ID, "durationMinutes")
        minutes.clear()
        minutes.send_keys("25")
        Select(self.browser.find_element(By.ID, "intensity")).select_by_value("high")
        for box in ("phases-follicular", "equipment-kettlebell", "targetAreas-fullBody"):
            self.browser.find_element(By.ID, box).click()
        self.browser.find_element(By.ID, "thumbnailURL").send_keys("https://example.com/thumb.jpg")
        self.browser.find_element(By.ID, "videoURL").send_keys("https://example.com/video.mp4")
        self.browser.find_element(By.ID, "instructorName").send_keys("Ana Ruiz")
        self.shot("workout-form")
        self.submit(self.browser.find_element(By.CSS_SELECTOR, "form.wide button[type=submit]"), "/console/catalog?saved=")
        self.check(title in self.text(), "the new workout is listed in the catalog")
        self.shot("catalog")
        self.fits_narrow_window("catalog")
        status, found = api(self.url + "/v1/workouts?q=" + urllib.parse.quote(title))
        titles = [item["title"] for item in found.get("items", [])] if isinstance(found, dict) else []
        self.check(status == 200 and title in titles, f"GET /v1/workouts finds {title!r}")

    def import_shows_error_next_to_record(self):
        def record(title, intensity):
            return {
                "id": str(uuid.uuid4()), "title": title, "description": "", "type": "yoga", "durationMinutes": 20,
                "intensity": intensity, "phases": ["luteal"], "equipment": ["yogaMat"], "thumbnailURL": "https://example.com/t.jpg",
                "videoURL": "https://example.com/v.mp4", "instructorName": "Maya Chen", "tags": [], "isFeatured": False,
                "isPremium": False, "targetAreas": ["core"], "benefits": [],
            }
        path = os.path.join(tempfile.mkdtemp(), "catalog.json")
        with open(path, "w") as file:
            json.dump({"workouts": [record("Evening Stretch Import", "low"), record("Broken Record Import", "extreme")], "programs": []}, file)
        self.open("/console/catalog/import")
        self.browser.find_element(By.ID, "file").send_keys(path)
        self.browser.find_element(By.CSS_SELECTOR, "form.wide button[type=submit]").click()
        bad = self.wait.until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, 'tr[data-record="workouts[1]"]')))
        self.check("Broken Record Import" in bad.text and 'intensity: "extreme" is not one of' in bad.text, "the bad record's error is shown in its own row")
        good = self.browser.find_element(By.CSS_SELECTOR, 'tr[data-record="workouts[0]"]')
        self.check("valid" in good.text and "is not one of" not in good.text, "the good record's row shows no error")
        self.shot("import-errors")
        status, found = api(self.url + "/v1/workouts?q=" + urllib.parse.quote("Evening Stretch Import"))
        self.check(status == 200 and found.get("items") == [], "nothing of a file with a bad record is imported")

    def user_session_revoked(self):
        sid = session_id(self.user_token)
        status, _ = api(self.url + "/v1/me", token=self.user_token)
        self.check(status == 200, "the user's session works before it is revoked")
        self.open("/console/users")
        self.browser.find_element(By.ID, "q").send_keys(self.user[0])
        self.browser.find_element(By.CSS_SELECTOR, "form.search button").click()
        self.wait.until(expected_conditions.url_contains("/console/users?q="))
        self.shot("users")
        self.browser.find_element(By.LINK_TEXT, self.user[0]).click()
        self.wait.until(expected_conditions.presence_of_element_located((By.ID, "sessions")))
        self.check("Health and cycle data are never shown" in self.text(), "the user page opens")
        self.check("61.73" not in self.browser.page_source, "the user page does not show the user's health value (61.73 bpm)")
        self.shot("user")
        self.fits_narrow_window("user")
        self.browser.find_element(By.CSS_SELECTOR, f'button[aria-label^="Revoke session {sid}"]').click()
        self.wait.until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".notice")))
        self.check(f"Session {sid} revoked" in self.text(), "the console says the session was revoked")
        status, body = api(self.url + "/v1/me", token=self.user_token)
        self.check(status == 401 and isinstance(body, dict) and body.get("code") == "session_revoked", f"the revoked session's next API call gets 401 (got {status})")
        self.check("user.opened" in self.text() and "user.session-revoked" in self.text(), "the user page shows the operator audit trail")

    def form_without_csrf_is_refused(self):
        cookie = self.browser.get_cookie("fitbase_console")["value"]
        user_id = urllib.parse.urlparse(self.browser.current_url).path.rstrip("/").split("/")[-1]
        status, body = api(f"{self.url}/console/users/{user_id}/tier", method="POST", form={"tier": "premium"}, headers={"Cookie": f"fitbase_console={cookie}"})
        self.check(status == 403 and "security token" in body, f"a form posted without its CSRF token is refused (got {status})")
        status, body = api(f"{self.url}/console/users/{user_id}/tier", method="POST", form={"tier": "premium", "csrf": "forged"}, headers={"Cookie": f"fitbase_console={cookie}"})
        self.check(status == 403, f"a form posted with a wrong CSRF token is refused (got {status})")

    def groups_deliveries_system(self):
        self.open("/console/groups")
        self.check("group(s)" in self.text(), "the groups page opens")
        self.shot("groups")
        links = self.browser.find_elements(By.CSS_SELECTOR, "main table a")
        if links:
            links[0].click()
            self.wait.until(expected_conditions.presence_of_element_located((By.ID, "members")))
            self.shot("group")
        self.open("/console/deliveries")
        self.check("outbox" in self.text().lower(), "the deliveries page opens")
        self.shot("deliveries")
        self.fits_narrow_window("deliveries")
        self.open("/console/system")
        self.browser.find_element(By.XPATH, "//button[normalize-space()='Verify the audit chain']").click()
        verdict = self.wait.until(expected_conditions.presence_of_element_located((By.ID, "audit-verdict")))
        self.check("intact" in verdict.text, f"the audit chain verifies from the System page ({verdict.text})")
        self.check("catalog.workout-created" in self.text(), "the System page shows the operator audit trail")
        self.shot("system")
        self.fits_narrow_window("system")
        # Keyboard: the skip link is the first thing Tab reaches, and it is visible when focused.
        self.browser.find_element(By.TAG_NAME, "body").send_keys("\ue004")
        focused = self.browser.switch_to.active_element
        self.check(focused.text == "Skip to content" and focused.is_displayed(), "Tab reaches a visible skip link first")

    def remote_config_and_reports(self):
        self.open("/console/config")
        for field, value in (("key", "social_beta"), ("value", "true"), ("defaultValue", "false"), ("rolloutPercent", "10"), ("summary", "The Groups tab")):
            element = self.browser.find_element(By.ID, field)
            element.clear()
            element.send_keys(value)
        self.submit(self.browser.find_element(By.XPATH, "//button[normalize-space()='Save flag']"), "/console/config?saved=")
        self.check("social_beta" in self.text() and "10 %" in self.text(), "a flag saved on the Config page is listed at 10 %")
        rollout = self.browser.find_element(By.ID, "rollout-social_beta")
        rollout.clear()
        rollout.send_keys("20")
        self.submit(self.browser.find_element(By.CSS_SELECTOR, 'form[action="/console/config/flags/social_beta/rollout"] button'), "/console/config?saved=")
        self.check(self.browser.find_element(By.ID, "rollout-social_beta").get_attribute("value") == "20" and "20 %" in self.text(), "the rollout moves to 20 %")
        status, anonymous = api(self.url + "/v1/config")
        self.check(status == 200 and "social_beta" not in anonymous.get("values", {}), "an anonymous caller does not see a flag not marked public")
        # Saved again, marked public: apps not signed in get its default.
        for field, value in (("key", "social_beta"), ("value", "true"), ("defaultValue", "false"), ("rolloutPercent", "20"), ("summary", "The Groups tab")):
            element = self.browser.find_element(By.ID, field)
            element.clear()
            element.send_keys(value)
        public = self.browser.find_element(By.ID, "isPublic")
        if not public.is_selected():
            public.click()
        self.submit(self.browser.find_element(By.XPATH, "//button[normalize-space()='Save flag']"), "/console/config?saved=")
        status, anonymous = api(self.url + "/v1/config")
        self.check(status == 200 and anonymous.get("values", {}).get("social_beta") is False, "an anonymous caller gets a public flag's default")
        self.shot("config")
        self.fits_narrow_window("config")
        # The error and the trace the app sent (scripts/ci/console-browser-test.sh posts them as the Kit's reporter does).
        self.open("/console/reports")
        text = self.text()
        self.check("offline" in text and "leaderboard" in text, "the Reports page lists the app's error by code and version")
        self.check("leaderboard.fetch" in text and "budget 2000 ms" in text, "the Reports page shows the leaderboard's trace with its 2 s budget")
        self.check(len(self.browser.find_elements(By.CSS_SELECTOR, "svg.chart")) >= 1, "the Reports page draws the percentile chart")
        self.check("SIGABRT" in text, "the Reports page groups the crash by its top frame")
        self.shot("reports")
        self.fits_narrow_window("reports")

    def sign_out(self):
        self.browser.find_element(By.XPATH, "//button[normalize-space()='Sign out']").click()
        self.wait.until(expected_conditions.url_contains("/console/signin"))
        self.open("/console")
        self.check(self.browser.current_url.endswith("/console/signin"), "after signing out the console asks to sign in again")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--admin", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--user-token", required=True)
    parser.add_argument("--out", required=True)
    ConsoleTest(parser.parse_args()).run()


if __name__ == "__main__":
    try:
        main()
    except AssertionError as failure:
        print(f"console browser test FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
