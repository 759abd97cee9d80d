import Hummingbird
import Logging
import RelayCore
import ServiceLifecycle
import SlackAdapter

/// The chat platforms `serve` runs: their routes, their reply senders and their long-running
/// services (websocket clients). A platform without credentials is simply absent here; the
/// start-up output and `/readyz` say why (`AppConfiguration.platformStatus`).
struct PlatformSetup {
    var senders: [any ReplySender] = []
    var services: [any Service] = []
    var slackRoutes: SlackHTTPRoutes?

    init(configuration: AppConfiguration, runtime: RelayRuntime, inbox: any RelayInbox, logger: Logger) {
        let slack = configuration.slack
        // Any Slack secret keys the box that seals response URLs in the outbox.
        if slack.isEnabled, let secret = slack.signingSecret ?? slack.appToken ?? slack.botToken {
            let api = SlackWebClient(httpClient: runtime.httpClient, configuration: slack, logger: logger)
            let box = SlackSecretBox(secret: secret)
            let inbound = SlackInbound(inbox: inbox, api: api, box: box, configuration: slack, logger: logger)
            senders.append(SlackReplySender(api: api, canPost: slack.botToken != nil, box: box, logger: logger))
            if let signingSecret = slack.signingSecret {
                slackRoutes = SlackHTTPRoutes(verifier: SlackRequestVerifier(signingSecret: signingSecret), inbound: inbound)
            }
            if let appToken = slack.appToken {
                let handler = SlackSocketModeHandler(inbound: inbound, logger: logger)
                let client = SocketModeClient(appToken: appToken, web: api, logger: logger) { envelope in await handler.handle(envelope) }
                services.append(SocketModeService(client: client))
            }
        }
    }

    func addRoutes(to router: Router<BasicRequestContext>) {
        slackRoutes?.add(to: router)
    }
}

/// Slack Socket Mode as a service: connects at start, closes its sockets at shutdown.
struct SocketModeService: Service {
    let client: SocketModeClient

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await client.run()
        } onGracefulShutdown: {
            client.stop()
        }
    }
}
