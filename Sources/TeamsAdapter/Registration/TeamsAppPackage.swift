import Foundation
import RelayCore
import RelayPlatform

/// The Teams app package an admin uploads (Teams admin center → Manage apps → Upload, or in
/// Teams: Apps → Manage your apps → Upload an app): `manifest.json`, `color.png` (192 × 192) and
/// `outline.png` (32 × 32, white on transparent), zipped. `rhea-relay register teams` writes it;
/// `bots/teams/manifest.json` is its manifest for the app id `TEAMS_APP_ID`, checked by a test.
///
/// The manifest (schema 1.17) declares the bot in personal chats, teams and group chats with its
/// command list (Teams shows at most 10 per scope: the everyday commands; every other one is
/// typed as it is) and the message action "Fact-check with Rhea" (`factCheck`, on any message,
/// without a dialog).
public enum TeamsAppPackage {
    public static let defaultFileName = "rhea-teams-app.zip"
    /// The commands Teams suggests, in order (at most 10).
    public static let listedCommands = ["translate", "fix", "rewrite", "summarize", "explain", "ai", "tribunal", "chain", "run", "help"]
    public static let placeholderAppID = "TEAMS_APP_ID"

    static func register(configuration: TeamsConfiguration, request: RegistrationRequest) throws -> [String] {
        guard let appID = configuration.appID else {
            throw ConfigurationError("TEAMS_APP_ID is not set: the app package names the bot by its Microsoft app id (Azure Bot → Configuration).")
        }
        var website = "https://github.com/rhea-relay/rhea-relay"
        if let url = request.publicURL {
            guard url.lowercased().hasPrefix("https://"), URL(string: url)?.host != nil else {
                throw ConfigurationError("--url must be the relay's public https:// base URL, got `\(url)`.")
            }
            website = url
        }
        let path = request.outputPath ?? defaultFileName
        let package = archive(appID: appID, website: website)
        do {
            try Data(package).write(to: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError("could not write the app package to \(path): \(error.localizedDescription)")
        }
        let endpoint = request.publicURL.map { TeamsServiceURL.join($0, TeamsRoutes.path) } ?? "https://<your relay>\(TeamsRoutes.path)"
        return [
            "Wrote \(path) (\(package.count) bytes): the Teams app for bot \(appID).",
            "In the Azure Bot's Configuration, set the messaging endpoint to \(endpoint), and add the Microsoft Teams channel.",
            "Then upload \(path) in Teams (Apps → Manage your apps → Upload an app), or in the Teams admin center for everyone.",
        ]
    }

    /// The zipped package.
    public static func archive(appID: String, website: String) -> [UInt8] {
        StoredArchive.zip([
            ("manifest.json", Array(manifestText(appID: appID, website: website).utf8)),
            ("color.png", TeamsIcons.color()),
            ("outline.png", TeamsIcons.outline()),
        ])
    }

    /// The manifest, pretty-printed with sorted keys and a final newline.
    public static func manifestText(appID: String = placeholderAppID, website: String = "https://github.com/rhea-relay/rhea-relay") -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(manifest(appID: appID, website: website))) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static func manifest(appID: String, website: String) -> JSONValue {
        let scopes: JSONValue = ["personal", "team", "groupChat"]
        let commands: [JSONValue] = listedCommands.compactMap { name in
            guard let spec = CommandTable.spec(named: name) else { return nil }
            return ["title": .string(name), "description": .string(String(spec.summary.prefix(128)))]
        }
        return [
            "$schema": "https://developer.microsoft.com/en-us/json-schemas/teams/v1.17/MicrosoftTeams.schema.json",
            "manifestVersion": "1.17",
            "version": "1.0.0",
            "id": .string(appID),
            "developer": [
                "name": "Rhea Relay", "websiteUrl": .string(website), "privacyUrl": .string(website), "termsOfUseUrl": .string(website),
            ],
            "name": ["short": "Rhea", "full": "Rhea Relay"],
            "description": [
                "short": "Translate, fix, rewrite and fact-check with several AI models.",
                "full":
                    "Rhea Relay brings multi-model AI into the chat: translate, fix grammar, rewrite, summarize and explain text, ask a council of models to fact-check a claim (with their agreement), and run saved chains. Mention @Rhea with a command, or use the message action Fact-check with Rhea on any message.",
            ],
            "icons": ["color": "color.png", "outline": "outline.png"],
            "accentColor": .string(TeamsIcons.accent),
            "bots": [
                [
                    "botId": .string(appID), "scopes": scopes, "supportsFiles": false, "isNotificationOnly": false,
                    "commandLists": [["scopes": scopes, "commands": .array(commands)]],
                ]
            ],
            "composeExtensions": [
                [
                    "botId": .string(appID),
                    "commands": [
                        [
                            "id": .string(TeamsInbound.factCheckCommand), "type": "action", "title": "Fact-check with Rhea",
                            "description": "Ask Rhea's council of models whether this message is true.", "context": ["message"], "fetchTask": false,
                            "parameters": [["name": "claim", "title": "Claim", "description": "The message to fact-check"]],
                        ]
                    ],
                ]
            ],
            "permissions": ["identity", "messageTeamMembers"],
            "validDomains": [],
        ]
    }
}

/// The app's icons, drawn here: a ring around a dot (a relay between people and models) —
/// white on the accent colour for `color.png`, white on transparent for `outline.png`, as Teams
/// asks of each.
enum TeamsIcons {
    static let accent = "#4B53BC"

    static func color() -> [UInt8] { draw(size: 192, background: (0x4B, 0x53, 0xBC, 0xFF)) }

    static func outline() -> [UInt8] { draw(size: 32, background: (0, 0, 0, 0)) }

    static func draw(size: Int, background: (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: size * size * 4)
        let center = Double(size) / 2
        let outer = Double(size) * 0.36
        let inner = Double(size) * 0.26
        let dot = Double(size) * 0.11
        for y in 0..<size {
            for x in 0..<size {
                let distance = ((Double(x) + 0.5 - center) * (Double(x) + 0.5 - center) + (Double(y) + 0.5 - center) * (Double(y) + 0.5 - center))
                    .squareRoot()
                let white = (distance <= outer && distance >= inner) || distance <= dot
                let pixel: (UInt8, UInt8, UInt8, UInt8) = white ? (0xFF, 0xFF, 0xFF, 0xFF) : background
                let index = (y * size + x) * 4
                pixels[index] = pixel.0
                pixels[index + 1] = pixel.1
                pixels[index + 2] = pixel.2
                pixels[index + 3] = pixel.3
            }
        }
        return StoredArchive.png(width: size, height: size, pixels: pixels)
    }
}
