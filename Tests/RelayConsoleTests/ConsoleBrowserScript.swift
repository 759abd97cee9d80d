/// What a person does in the console, as Selenium drives headless Chromium (issue 45, point 5):
/// arguments are the server's base URL, the sign-in link's path and query, the folder for the
/// screenshots and the ledger search's word. Prints one JSON object: what the browser showed at
/// each step, for the Swift test to check against the store.
enum ConsoleBrowserScript {
    static let source = #"""
        import json, os, sys
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select, WebDriverWait

        base, link, shots, word = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
        os.makedirs(shots, exist_ok=True)
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        # Root in a container needs --no-sandbox; JavaScript off: the console needs none.
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=900,1300",
                         "--blink-settings=scriptEnabled=false"]:
            options.add_argument(argument)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        driver.set_page_load_timeout(30)
        seen = {}

        def shot(name):
            driver.save_screenshot(os.path.join(shots, "console-" + name + ".png"))

        def go(element, by, value):
            # Clicks what leads to another page, and waits until the browser has left this one
            # and the next one shows the element named (chromedriver may answer a question about
            # the old page, mid-navigation, with an error: that counts as having left it).
            old = driver.find_element(By.TAG_NAME, "html")
            element.click()

            def arrived(d):
                try:
                    old.is_enabled()
                    return False
                except Exception:
                    pass
                try:
                    return len(d.find_elements(by, value)) > 0
                except Exception:
                    return False

            WebDriverWait(driver, 20).until(arrived)

        def heading():
            return driver.find_element(By.TAG_NAME, "h1").text

        def points(chart):
            return [{"day": r.get_attribute("data-day"), "series": r.get_attribute("data-series"), "value": float(r.get_attribute("data-value"))}
                    for r in driver.find_elements(By.CSS_SELECTOR, "#" + chart + " rect[data-day]")]

        try:
            driver.get(base + link)
            seen["signInPage"] = driver.find_element(By.TAG_NAME, "main").text
            shot("signin")
            go(driver.find_element(By.ID, "signin"), By.ID, "budget-gauge")
            seen["afterSignIn"] = {"path": driver.current_url[len(base):], "heading": heading()}
            seen["commands"] = points("commands-chart")
            seen["cost"] = points("cost-chart")
            gauge = driver.find_element(By.ID, "budget-gauge")
            seen["gauge"] = {"spent": float(gauge.get_attribute("data-spent")), "limit": float(gauge.get_attribute("data-limit"))}
            shot("overview")

            go(driver.find_element(By.LINK_TEXT, "Ledger"), By.ID, "q")
            box = driver.find_element(By.ID, "q")
            box.clear()
            box.send_keys(word)
            go(driver.find_element(By.CSS_SELECTOR, "form.search button"), By.ID, "q")
            entries = driver.find_elements(By.CSS_SELECTOR, "article.entry")
            seen["ledger"] = [{"id": e.get_attribute("data-id"), "claim": e.find_element(By.CLASS_NAME, "claim").text} for e in entries]
            shot("ledger")
            first = entries[0].get_attribute("data-id")
            Select(driver.find_element(By.ID, "said-" + first)).select_by_value("false")
            go(driver.find_element(By.ID, "mark-" + first), By.ID, "notice")
            seen["marked"] = {"id": first, "notice": driver.find_element(By.ID, "notice").text,
                              "mark": driver.find_element(By.CSS_SELECTOR, "#entry-" + first + " .mark").text}

            go(driver.find_element(By.LINK_TEXT, "Chains and commands"), By.ID, "new-chain")
            driver.find_element(By.ID, "new-name").send_keys("polish")
            driver.find_element(By.ID, "new-source").send_keys("input > gramar > output")
            go(driver.find_element(By.ID, "save-new"), By.ID, "error")
            seen["chainError"] = {"error": driver.find_element(By.ID, "error").text,
                                  "kept": driver.find_element(By.ID, "new-source").get_attribute("value")}
            source = driver.find_element(By.ID, "new-source")
            source.clear()
            source.send_keys("input > grammar > rewrite:formal > output")
            go(driver.find_element(By.ID, "save-new"), By.ID, "notice")
            seen["chainSaved"] = {"notice": driver.find_element(By.ID, "notice").text,
                                  "listed": driver.find_element(By.ID, "source-polish").get_attribute("value")}
            shot("chains")

            go(driver.find_element(By.LINK_TEXT, "Council"), By.ID, "ece")
            seen["ece"] = driver.find_element(By.ID, "ece").text
            seen["bins"] = [{"bin": r.get_attribute("data-bin"), "count": r.get_attribute("data-count")}
                            for r in driver.find_elements(By.CSS_SELECTOR, "#calibration-chart rect[data-bin]")]
            shot("council")

            go(driver.find_element(By.LINK_TEXT, "Connections"), By.ID, "depth")
            seen["depth"] = driver.find_element(By.ID, "depth").text
            shot("connections")

            driver.get(base + "/console/test/T2")
            seen["otherTeam"] = {"heading": heading(), "text": driver.find_element(By.ID, "refusal").text}
            driver.get(base + link)
            go(driver.find_element(By.ID, "signin"), By.ID, "refusal")
            seen["reusedLink"] = {"heading": heading(), "text": driver.find_element(By.ID, "refusal").text}
            shot("refused")
        finally:
            driver.quit()
        print(json.dumps(seen))
        """#
}
