import SlackAdapter
import Testing

@Suite("Slack configuration")
struct SlackConfigurationTests {
    @Test func withNoCredentialsSlackIsOffAndSaysWhatToSet() {
        let slack = SlackConfiguration()
        #expect(!slack.isEnabled)
        #expect(slack.status.contains("SLACK_SIGNING_SECRET"))
        #expect(slack.status.contains("SLACK_APP_TOKEN"))
    }

    @Test func withoutABotTokenTheStatusSaysWhatCannotWork() {
        let slack = SlackConfiguration(signingSecret: "s")
        #expect(slack.httpModeEnabled && !slack.socketModeEnabled)
        #expect(slack.status.hasPrefix("on (HTTP)"))
        #expect(slack.status.contains("SLACK_BOT_TOKEN is not set"))
        let both = SlackConfiguration(signingSecret: "s", botToken: "xoxb-1", appToken: "xapp-1", apiURL: "http://127.0.0.1:9/api/")
        #expect(both.status == "on (HTTP + Socket Mode)")
        #expect(both.apiURL == "http://127.0.0.1:9/api")
    }
}
