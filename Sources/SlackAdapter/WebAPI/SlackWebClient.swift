import Foundation
public import Logging
public import RelayCore
public import RelayHTTP
public import RelayPlatform

/// Slack's Web API over HTTP: `SlackWebAPI` on a shared AsyncHTTPClient.
///
/// It sends through the relay's shared `HTTPTransport` (one pool, no redirects: a redirect
/// would carry the token elsewhere). There are no retries here: a failed call throws at once and its
/// `deliveryOutcome` tells the outbox when to try again. Tokens and `response_url`s never
/// reach logs or errors.
public struct SlackWebClient: SlackWebAPI {
    /// The time limit of one call when neither the client nor the request says otherwise.
    public static let defaultTimeout: Duration = .seconds(10)
    /// Largest answer read; Slack's answers are a few kilobytes.
    static let maxResponseBytes = 1024 * 1024

    let transport: HTTPTransport
    /// The Web API base without a trailing slash, e.g. `https://slack.com/api`.
    public let apiURL: String
    let botToken: String?
    /// The time limit of a whole call (sending, waiting, reading) unless the request says otherwise.
    public let timeout: Duration
    let logger: Logger

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - transport: the relay's shared transport.
    ///   - apiURL: the Web API base; a fake's in tests.
    ///   - botToken: the `xoxb-…` token for `chat.*`; nil makes those calls fail with
    ///     `.invalidRequest` (a `response_url` and Socket Mode need none).
    ///   - timeout: the default time limit per call.
    public init(
        transport: HTTPTransport,
        apiURL: String = SlackConfiguration.defaultAPIURL,
        botToken: String?,
        timeout: Duration = SlackWebClient.defaultTimeout,
        logger: Logger
    ) {
        self.transport = transport
        var base = apiURL.trimmingCharacters(in: .whitespaces)
        while base.hasSuffix("/") { base.removeLast() }
        self.apiURL = base
        self.botToken = botToken.flatMap { $0.isEmpty ? nil : $0 }
        self.timeout = timeout
        var logger = logger
        logger[metadataKey: "platform"] = "slack"
        self.logger = logger
    }

    /// A client for `configuration`'s API URL and bot token.
    public init(
        transport: HTTPTransport, configuration: SlackConfiguration, timeout: Duration = SlackWebClient.defaultTimeout,
        logger: Logger
    ) {
        self.init(
            transport: transport, apiURL: configuration.apiURL, botToken: configuration.botToken, timeout: timeout,
            logger: logger)
    }

    public func send(_ request: SlackWebRequest) async throws(SlackAPIError) -> JSONValue {
        let label = request.label
        let limit = request.timeout ?? timeout
        let httpRequest = try makeRequest(request)
        let started = ContinuousClock.now
        let response: HTTPAnswer
        do {
            response = try await exchange(httpRequest, label: label, timeout: limit)
        } catch {
            logger.debug(
                "Slack call failed",
                metadata: ["slack.method": "\(label)", "slack.error": "\(error.label)", "slack.elapsed": "\(elapsed(since: started))"])
            throw error
        }
        let answer = Self.interpret(
            status: response.status, retryAfter: response.retryAfter(), body: response.body, method: label,
            isResponseURL: request.isResponseURL)
        switch answer {
        case .success(let json):
            logger.debug(
                "Slack call succeeded",
                metadata: ["slack.method": "\(label)", "slack.status": "\(response.status)", "slack.elapsed": "\(elapsed(since: started))"])
            let warnings = Self.warnings(in: json)
            if !warnings.isEmpty {
                // `message_truncated` and friends: the call worked but not quite as asked.
                logger.notice(
                    "Slack answered with warnings",
                    metadata: ["slack.method": "\(label)", "slack.warnings": "\(warnings.joined(separator: ","))"])
            }
            return json
        case .failure(let error):
            logger.debug(
                "Slack refused a call",
                metadata: [
                    "slack.method": "\(label)", "slack.status": "\(response.status)", "slack.error": "\(error.label)",
                    "slack.elapsed": "\(elapsed(since: started))",
                ])
            throw error
        }
    }

    private func elapsed(since start: ContinuousClock.Instant) -> String {
        "\(start.duration(to: .now))"
    }
}

extension SlackWebRequest {
    var isResponseURL: Bool {
        if case .responseURL = destination { return true }
        return false
    }
}
