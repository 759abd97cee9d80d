/// What the Google Chat adapter needs, read from configuration and the environment at start.
///
/// A Google Chat app with an HTTP endpoint: Google Chat POSTs each interaction event to
/// `/google-chat/events` with a bearer token it signs. `GOOGLE_CHAT_AUDIENCE` says which kind the
/// app is configured to send (its "Authentication Audience" setting): a **project number**
/// (digits) — tokens issued by `chat@system.gserviceaccount.com` with that number as audience,
/// signed with that account's published certificates — or the **endpoint URL** — Google ID
/// tokens (`accounts.google.com`) for that URL, whose `email` is
/// `chat@system.gserviceaccount.com`, signed with Google's OAuth certificates. Answers that are
/// not ready within the event go through the Chat API with the app's service account
/// (`GOOGLE_CHAT_SERVICE_ACCOUNT`, the key JSON, or `GOOGLE_CHAT_SERVICE_ACCOUNT_FILE`).
public struct GoogleChatConfiguration: Sendable, Hashable {
    /// The issuer, and for endpoint-URL tokens the `email`, of every token Google Chat signs.
    public static let chatIssuer = "chat@system.gserviceaccount.com"
    /// The certificates `chat@system.gserviceaccount.com` signs with, as a map of key id to PEM.
    public static let chatCertsURL = "https://www.googleapis.com/service_accounts/v1/metadata/x509/chat@system.gserviceaccount.com"
    /// Google's ID-token certificates, as a map of key id to PEM.
    public static let googleCertsURL = "https://www.googleapis.com/oauth2/v1/certs"
    public static let defaultAPIURL = "https://chat.googleapis.com"
    public static let defaultTokenURL = "https://oauth2.googleapis.com/token"
    /// The one scope a Chat app's service account asks for.
    public static let botScope = "https://www.googleapis.com/auth/chat.bot"

    /// `GOOGLE_CHAT_AUDIENCE`: the project number or the endpoint URL.
    public var audience: GoogleChatAudience?
    /// `GOOGLE_CHAT_SERVICE_ACCOUNT` / `_FILE`: the app's service account.
    public var serviceAccount: GoogleServiceAccount?
    /// `GOOGLE_CHAT_CERTS_URL`: by default the certificates of the audience's kind of token.
    public var certsURL: String
    /// `GOOGLE_CHAT_API_URL`.
    public var apiURL: String
    /// `GOOGLE_CHAT_TOKEN_URL`: by default the key file's `token_uri`, else Google's.
    public var tokenURL: String
    /// How long an event's request waits for its reply (`GoogleChatEventAnswers`); not read
    /// from configuration: tests of the routes alone shorten it.
    public var eventAnswerWindow: Duration = GoogleChatEventAnswers.window

    public init(
        audience: GoogleChatAudience? = nil, serviceAccount: GoogleServiceAccount? = nil, certsURL: String? = nil, apiURL: String? = nil,
        tokenURL: String? = nil
    ) {
        self.audience = audience
        self.serviceAccount = serviceAccount
        self.certsURL = certsURL ?? audience?.defaultCertsURL ?? Self.chatCertsURL
        self.apiURL = apiURL ?? Self.defaultAPIURL
        self.tokenURL = tokenURL ?? serviceAccount?.tokenURI ?? Self.defaultTokenURL
    }

    public var isEnabled: Bool { audience != nil && serviceAccount != nil }
}

/// Who Google Chat's tokens are for, as the app's configuration sets it.
public enum GoogleChatAudience: Sendable, Hashable {
    /// The Cloud project's number: tokens from `chat@system.gserviceaccount.com`.
    case projectNumber(String)
    /// The app's HTTP endpoint URL: Google ID tokens.
    case endpointURL(String)

    /// Digits are a project number; an https URL (http only on loopback, for tests) the endpoint.
    public init?(_ value: String) {
        if !value.isEmpty, value.utf8.count <= 20, value.allSatisfy(\.isASCII), value.allSatisfy(\.isNumber) {
            self = .projectNumber(value)
        } else if value.hasPrefix("https://") || value.hasPrefix("http://127.0.0.1") || value.hasPrefix("http://localhost") {
            self = .endpointURL(value)
        } else {
            return nil
        }
    }

    /// The `aud` every token must carry.
    public var value: String {
        switch self {
        case .projectNumber(let number): number
        case .endpointURL(let url): url
        }
    }

    var defaultCertsURL: String {
        switch self {
        case .projectNumber: GoogleChatConfiguration.chatCertsURL
        case .endpointURL: GoogleChatConfiguration.googleCertsURL
        }
    }
}
