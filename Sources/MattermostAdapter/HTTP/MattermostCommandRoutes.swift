import Crypto
import Foundation
public import Hummingbird
import NIOCore
import RelayCore
import RelayPlatform

/// Slash commands over HTTP: `POST /mattermost/commands`.
///
/// The command's token is checked first, in constant time, against `MATTERMOST_COMMAND_TOKENS`:
/// from `Authorization: Token …` before the body is read, else from the form's `token` field
/// before any other field is looked at. A wrong or missing token is 401 with a message that
/// says what to set; nothing runs. The body is read up to `maxBody` (beyond it 413), decoded
/// (malformed → 400 naming the field), handed to `MattermostInbound`, and acknowledged at once
/// with an ephemeral "⏳ Working on it…" — well inside Mattermost's 30 s (and Slack's 3 s,
/// which the relay keeps to everywhere); the answer follows through the outbox.
public struct MattermostCommandRoutes: Sendable {
    /// The most a command's form can be, from Mattermost's own limit in its own units: a message
    /// (and so a command's text) is at most 16 383 runes (`MattermostLimits.postRunes`), a rune is
    /// at most 4 bytes of UTF-8, and the form URL-encodes each byte as `%XX` — 12 bytes a rune
    /// (`RequestBodyLimit.derived`) — plus the form's other fields (ids, names, the `response_url`, the token), which 8 KiB
    /// holds. A command at Mattermost's maximum in any script fits (issue 47, point 3: 11 000 "日"
    /// were refused at the old 96 KiB); a byte more than this is 413.
    static let maxBody = RequestBodyLimit.derived(characters: MattermostLimits.postRunes, other: 8 * 1024)

    let tokens: MattermostCommandTokens
    let inbound: MattermostInbound

    public init(tokens: MattermostCommandTokens, inbound: MattermostInbound) {
        self.tokens = tokens
        self.inbound = inbound
    }

    public func add(to router: Router<some RequestContext>) {
        router.group("mattermost").post("commands") { request, _ in
            var authenticated = false
            if let header = request.headers[.authorization] {
                try tokens.check(Self.token(fromHeader: header), source: "Authorization")
                authenticated = true
            }
            var request = request
            let body = try await request.collectBody(limitedTo: Self.maxBody)
            // A body that is no form (broken %-escapes, not UTF-8) is 400 before its token is
            // looked for: there is no field to read it from, and "no token" would mislead.
            let form: MattermostCommandForm
            do throws(MattermostPayloadError) {
                form = try MattermostCommandForm.decode(body.readableBytesView)
            } catch {
                return Self.error(.badRequest, error.description)
            }
            if !authenticated { try tokens.check(form.token, source: "token") }
            let command: MattermostSlashCommand
            do throws(MattermostPayloadError) {
                command = try MattermostSlashCommand(form: form)
            } catch {
                return Self.error(.badRequest, error.description)
            }
            return Self.json(await inbound.slashCommand(command))
        }
    }

    /// `Token abc` → `abc`; nil for any other scheme.
    static func token(fromHeader header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "token" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.encoded())))
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        json(["error": .string(message)], status: status)
    }
}

/// The slash commands' tokens, kept as SHA-256 digests and compared in constant time (a digest's
/// `==` is; every configured token is compared, matched or not).
public struct MattermostCommandTokens: Sendable {
    private let digests: [SHA256Digest]

    public init(_ tokens: [MattermostToken]) {
        digests = tokens.map { SHA256.hash(data: Array($0.secret.utf8)) }
    }

    /// Throws 401 unless `token` is one of them.
    func check(_ token: String?, source: String) throws(MattermostTokenError) {
        guard let token, !token.isEmpty else { throw .missing(source: source) }
        let candidate = SHA256.hash(data: Array(token.utf8))
        var found = false
        for digest in digests where digest == candidate { found = true }
        guard found else { throw .unknown }
    }
}

/// A slash command whose token is missing or not one of `MATTERMOST_COMMAND_TOKENS`: 401.
public enum MattermostTokenError: Error, Sendable, Hashable, HTTPResponseError, CustomStringConvertible {
    case missing(source: String)
    case unknown

    public var status: HTTPResponse.Status { .unauthorized }

    public var description: String {
        switch self {
        case .missing(let source):
            "No slash-command token (\(source)): Mattermost sends each command's token as `Authorization: Token …` and in the `token` field."
        case .unknown:
            "Unknown slash-command token: add this command's token (Integrations → Slash Commands) to MATTERMOST_COMMAND_TOKENS on the relay."
        }
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        MattermostCommandRoutes.error(status, description)
    }
}
