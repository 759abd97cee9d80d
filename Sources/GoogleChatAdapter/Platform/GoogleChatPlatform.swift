import Foundation
import Hummingbird
public import Logging
import RelayCore
import RelayHTTP
import RelayPipeline
public import RelayPlatform

/// Google Chat, as the server composes it: reads the `googleChat.*` section, and when connected
/// serves `/google-chat/events` (the app's HTTP endpoint, each request's token verified) and
/// delivers the outbox in the event's own answer or through the Chat API as the app's service
/// account.
public struct GoogleChatPlatform: ChatPlatform {
    public static let name = "google-chat"
    public static let secretVariables = ["GOOGLE_CHAT_SERVICE_ACCOUNT"]
    /// A key made when first asked for and thrown away (`GoogleServiceAccount.madeUpExample`).
    static let serviceAccountExample = GoogleServiceAccount.madeUpExample()
    public static var deployVariables: [DeployVariable] {
        [DeployVariable("GOOGLE_CHAT_AUDIENCE", example: "123456789012"), DeployVariable("GOOGLE_CHAT_SERVICE_ACCOUNT", example: serviceAccountExample)]
    }
    /// A deploy-file test points them at a closed port, so nothing leaves the machine.
    public static let apiURLVariables = ["GOOGLE_CHAT_CERTS_URL", "GOOGLE_CHAT_API_URL", "GOOGLE_CHAT_TOKEN_URL"]
    public static let registrationHelp =
        "prints what to enter in the Google Cloud console for the Chat app: the HTTP endpoint under --url, the authentication audience (GOOGLE_CHAT_AUDIENCE) and the slash commands (bots/google-chat/commands.md; --out FILE writes that list)."

    public let configuration: GoogleChatConfiguration
    let given: [String]

    public init(configuration: GoogleChatConfiguration) {
        self.configuration = configuration
        self.given = []
    }

    /// The service account's key from the environment or a file, never from the YAML itself.
    public init(configuration values: ConfigValues) throws {
        var audience: GoogleChatAudience?
        if let value = values.string("googleChat.audience") {
            guard let parsed = GoogleChatAudience(value) else {
                throw ConfigurationError(
                    "GOOGLE_CHAT_AUDIENCE (googleChat.audience) must be the Chat app's authentication audience: the Cloud project's number (digits) or the app's https endpoint URL."
                )
            }
            audience = parsed
        }
        let key = try values.secret("googleChat.serviceAccount", fileKey: "googleChat.serviceAccountFile")
        let account = try key.map {
            try GoogleServiceAccount(json: $0, variable: "GOOGLE_CHAT_SERVICE_ACCOUNT (or the file GOOGLE_CHAT_SERVICE_ACCOUNT_FILE names)")
        }
        self.configuration = GoogleChatConfiguration(
            audience: audience, serviceAccount: account, certsURL: try values.url("googleChat.certsURL"), apiURL: try values.url("googleChat.apiURL"),
            tokenURL: try values.url("googleChat.tokenURL"))
        self.given = values.given(["googleChat.audience"]) + (account != nil ? ["GOOGLE_CHAT_SERVICE_ACCOUNT"] : [])
    }

    public var status: PlatformStatus {
        guard configuration.isEnabled, let audience = configuration.audience else {
            let missing = [
                configuration.audience == nil ? "GOOGLE_CHAT_AUDIENCE" : nil, configuration.serviceAccount == nil ? "GOOGLE_CHAT_SERVICE_ACCOUNT_FILE" : nil,
            ]
            return .off(given: given, missing: missing.compactMap { $0 }.joined(separator: " and "))
        }
        let kind = if case .projectNumber = audience { "project-number tokens" } else { "ID tokens for the endpoint URL" }
        return .on("events at \(GoogleChatRoutes.path), \(kind)")
    }

    /// Google Chat hands over no URL to answer at: answers go to the Chat API configured.
    public var callbackRule: CallbackRule { .nothing }

    public func connect(_ context: PlatformContext) throws -> any PlatformConnection {
        guard configuration.isEnabled, let audience = configuration.audience else {
            throw ConfigurationError("Google Chat is off: set GOOGLE_CHAT_AUDIENCE and GOOGLE_CHAT_SERVICE_ACCOUNT_FILE.")
        }
        let tokens = GoogleChatTokens.renewing(configuration: configuration, transport: context.transport, clock: context.clock)
        let api = GoogleChatAPI(
            baseURL: configuration.apiURL, transport: context.transport, tokens: tokens, credentials: context.credentials, clock: context.clock,
            logger: context.logger)
        let keys = GoogleChatSigningKeys.published(certsURL: configuration.certsURL, transport: context.transport, clock: context.clock)
        return GoogleChatConnection(
            validator: GoogleChatTokenValidator(audience: audience, keys: keys, clock: context.clock), api: api,
            answers: GoogleChatEventAnswers(window: configuration.eventAnswerWindow),
            logger: context.logger)
    }

    /// The service account's key, by asking the token endpoint for a token.
    public func checkCredentials(logger: Logger) async -> CredentialCheck? {
        guard configuration.isEnabled, let account = configuration.serviceAccount else { return nil }
        return await CredentialCheck.asking { transport in
            switch await GoogleChatTokens.grant(configuration: configuration, transport: transport, now: Date()) {
            case .success: return .accepted("the service account \(account.clientEmail) gets a Chat API token")
            case .failure(let error):
                return error.credentialCheck(
                    "GOOGLE_CHAT_SERVICE_ACCOUNT", fix: "Make a new key for the service account (Google Cloud console → IAM → Service accounts → Keys).")
            }
        }
    }

    public func register(_ request: RegistrationRequest, logger: Logger) async throws -> [String] {
        let endpoint = request.publicURL.map { GoogleChatAPI.join($0, GoogleChatRoutes.path) } ?? "https://<your relay>\(GoogleChatRoutes.path)"
        let audience = configuration.audience?.value ?? "<GOOGLE_CHAT_AUDIENCE>"
        var wrote: [String] = []
        if let path = request.outputPath {
            do {
                try Data(GoogleChatCommands.fileContents().utf8).write(to: URL(fileURLWithPath: path))
            } catch {
                throw ConfigurationError("could not write the command list to \(path): \(error.localizedDescription)")
            }
            wrote = ["Wrote \(path): the slash commands to enter, each with its id."]
        }
        return wrote + [
            "In the Google Cloud console, Google Chat API → Configuration:",
            "  Connection settings: HTTP endpoint URL \(endpoint)",
            "  Authentication audience: \(configuration.audience.map { if case .projectNumber = $0 { "Project number" } else { "HTTP endpoint URL" } } ?? "as GOOGLE_CHAT_AUDIENCE says") (GOOGLE_CHAT_AUDIENCE=\(audience))",
            "  Commands: the \(GoogleChatCommands.names.count) slash commands of bots/google-chat/commands.md (or --out FILE), each with its id.",
            "The service account (GOOGLE_CHAT_SERVICE_ACCOUNT_FILE) needs no role: the Chat app's own scope (chat.bot) is enough.",
        ]
    }
}

/// A connected Google Chat: the events endpoint and the outbox's deliverer.
struct GoogleChatConnection: PlatformConnection {
    let validator: GoogleChatTokenValidator
    let api: GoogleChatAPI
    let answers: GoogleChatEventAnswers
    let logger: Logger

    var sender: any ReplySender {
        Deliverer(GoogleChatDelivery(api: api, answers: answers, logger: logger), logger: logger)
    }

    func addRoutes(to router: Router<BasicRequestContext>, inbox: any RelayInbox) {
        GoogleChatRoutes(validator: validator, inbound: GoogleChatInbound(inbox: inbox, logger: logger), answers: answers, inbox: inbox, logger: logger)
            .add(to: router)
    }
}
