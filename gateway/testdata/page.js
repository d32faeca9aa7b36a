// Headless Chromium, driven by playwright-core, uses the gateway's page:
// it subscribes (autostart), publishes with the page's mutation form, and
// waits for its own event to appear in the list.
// Usage: node page.js <chromium path> <page url> <mutation> <text to wait for>
const { chromium } = require("playwright-core");
const [exe, url, mutation, want] = process.argv.slice(2);
(async () => {
  const browser = await chromium.launch({ executablePath: exe, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector("#status:text('connected')", { timeout: 10000 });
    await page.waitForSelector("#events li:text('subscribed')", { timeout: 10000 });
    console.log("subscribed");
    // The Go side confirms the upstream subscription before we publish.
    await new Promise((resolve) => process.stdin.once("data", resolve));
    await page.fill("#mutation", mutation);
    await page.click("#publish");
    await page.waitForSelector(`#events li:has-text(${JSON.stringify(want)})`, { timeout: 10000 });
    console.log("published:", await page.textContent("#published"));
    console.log("event:", await page.textContent("#events li"));
  } finally {
    await browser.close();
  }
  process.exit(0); // stdin, read above, would keep Node running
})().catch((e) => { console.error(e); process.exit(1); });
