public import RelayPlatform

/// What the Teams adapter needs, read from configuration and the environment at start.
///
/// A Teams bot is an Azure Bot registration: an app id (`TEAMS_APP_ID`) and its client secret
/// (`TEAMS_APP_PASSWORD`, or `TEAMS_APP_PASSWORD_FILE`). The Bot Connector POSTs each activity
/// to `/teams/messages` with a JWT it signs (checked against `openidMetadataURL`'s keys); replies
/// go to the activity's `serviceUrl` with a token the relay gets from `tokenURL` by the
/// client-credentials grant. `TEAMS_TENANT_ID` is for a single-tenant bot: its tokens come from
/// its own tenant's endpoint instead of `botframework.com`'s.
///
/// Secrets live only in memory and never print (`TeamsSecret`).
public struct TeamsConfiguration: Sendable, Hashable {
    /// The Bot Framework's OpenID metadata: its `jwks_uri` lists the keys the Bot Connector
    /// signs with, and its `issuer` is the tokens' `iss`.
    public static let defaultOpenIDMetadataURL = "https://login.botframework.com/v1/.well-known/openidconfiguration"
    /// The scope of the relay's own tokens to the Bot Connector.
    public static let connectorScope = "https://api.botframework.com/.default"

    /// `TEAMS_APP_ID`: the bot's Microsoft app id (a GUID), the audience of every inbound token.
    public var appID: String?
    /// `TEAMS_APP_PASSWORD`: the app's client secret.
    public var appPassword: TeamsSecret?
    /// `TEAMS_TENANT_ID`: set for a single-tenant bot.
    public var tenantID: String?
    /// `TEAMS_OPENID_METADATA_URL`.
    public var openIDMetadataURL: String
    /// `TEAMS_TOKEN_URL`: by default the Microsoft identity platform's token endpoint of the
    /// bot's tenant (`botframework.com` for a multi-tenant bot).
    public var tokenURL: String

    public init(
        appID: String? = nil, appPassword: TeamsSecret? = nil, tenantID: String? = nil, openIDMetadataURL: String? = nil, tokenURL: String? = nil
    ) {
        self.appID = appID
        self.appPassword = appPassword
        self.tenantID = tenantID
        self.openIDMetadataURL = openIDMetadataURL ?? Self.defaultOpenIDMetadataURL
        self.tokenURL = tokenURL ?? Self.defaultTokenURL(tenantID: tenantID)
    }

    /// `https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token`, the tenant being the bot's
    /// own for a single-tenant bot and `botframework.com` for a multi-tenant one.
    public static func defaultTokenURL(tenantID: String?) -> String {
        "https://login.microsoftonline.com/\(tenantID ?? "botframework.com")/oauth2/v2.0/token"
    }

    public var isEnabled: Bool { appID != nil && appPassword != nil }

    /// A Microsoft app or tenant id: a GUID (`8-4-4-4-12` hexadecimal digits).
    public static func looksLikeGUID(_ value: String) -> Bool {
        let groups = value.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return false }
        return groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}

/// A Teams secret (the app's client secret, a bot token): never printed.
public struct TeamsSecret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public let secret: String

    public init(_ secret: String) {
        self.secret = secret
    }

    public var description: String { "<teams secret>" }
    public var debugDescription: String { description }
}
