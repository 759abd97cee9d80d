import RelayPlatform
import SlackAdapter
import Testing

@Suite("Slack configuration and status")
struct SlackConfigurationTests {
    @Test func withNoCredentialsSlackIsOffAndSaysWhatToSet() {
        let slack = SlackConfiguration()
        let status = SlackPlatform(configuration: slack).status
        #expect(!slack.isEnabled && !status.isOn)
        #expect(status.description.contains("SLACK_SIGNING_SECRET"))
        #expect(status.description.contains("SLACK_APP_TOKEN"))
    }

    @Test func withoutABotTokenTheStatusSaysWhatCannotWork() {
        let slack = SlackConfiguration(signingSecret: "s")
        #expect(slack.httpModeEnabled && !slack.socketModeEnabled)
        let status = SlackPlatform(configuration: slack).status.description
        #expect(status.hasPrefix("on (HTTP)"))
        #expect(status.contains("SLACK_BOT_TOKEN is not set"))
        let both = SlackConfiguration(signingSecret: "s", botToken: "xoxb-1", appToken: "xapp-1", apiURL: "http://127.0.0.1:9/api/")
        #expect(SlackPlatform(configuration: both).status.description == "on (HTTP + Socket Mode)")
        #expect(both.apiURL == "http://127.0.0.1:9/api")
    }
}
