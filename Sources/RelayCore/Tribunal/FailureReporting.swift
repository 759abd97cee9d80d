/// The one place where a run's failure gets its error id and its details reach the log.
///
/// A chat reply must not show a backend's or model's address, a file path or a provider's own
/// error text: those help an attacker and confuse a user. So the relay mints a short id for each
/// failure, hands the details to `log` under that id, and replies in the user's terms with the
/// id ("The AI backend did not answer in time (error id 7KQ2-M9). Try again in a minute; …").
/// An admin then finds the details by the id. The terminal adapter, which only the operator
/// uses, asks for `.operator` instead and sees the details in its reply.
public struct FailureReporting: Sendable {
    /// Who reads the replies of the relay that reports.
    public enum Audience: String, Sendable, Hashable, Codable {
        /// Chat users: the failure in their terms, with an error id.
        case chat
        /// The operator at a terminal: the failure with every detail.
        case `operator`
    }

    public var audience: Audience
    let log: @Sendable (LoggedFailure) -> Void

    /// For chat platforms: ids in replies, details to `log`.
    public static func chat(log: @escaping @Sendable (LoggedFailure) -> Void) -> FailureReporting {
        FailureReporting(audience: .chat, log: log)
    }

    /// For the operator's terminal: the details in the reply itself.
    public static let `operator` = FailureReporting(audience: .operator, log: { _ in })

    /// Mints an id for a backend failure, logs its details under it, and returns it marked as
    /// reported, so its `userMessage` carries the id. A failure already reported passes as is.
    package func report(_ error: TribunalError, call: String, event: Event) -> TribunalError {
        if case .reported = error { return error }
        let id = Self.mintID()
        log(LoggedFailure(id: id, kind: error.label, detail: error.operatorMessage, call: call, event: event))
        return .reported(FailureReport(id: id, error: error, audience: audience))
    }

    /// The same for a caller that is not a chat event (the served Rhea API): `source` says where
    /// (`rhea-api`), `caller` who asked (never a key).
    public func report(_ error: TribunalError, call: String, source: String, caller: String) -> TribunalError {
        if case .reported = error { return error }
        let id = Self.mintID()
        log(LoggedFailure(id: id, kind: error.label, detail: error.operatorMessage, call: call, platform: source, team: caller, channel: ""))
        return .reported(FailureReport(id: id, error: error, audience: audience))
    }

    /// The reply's text for a voice note that could not be fetched or transcribed because a
    /// service failed: `userMessage` with an id whose log line holds `detail` (or, for the
    /// operator, with the detail itself).
    package func voiceFailureMessage(_ userMessage: String, kind: String, detail: String, event: Event) -> String {
        switch audience {
        case .operator:
            return "\(userMessage) (\(detail))"
        case .chat:
            let id = Self.mintID()
            log(LoggedFailure(id: id, kind: kind, detail: detail, call: "voice", event: event))
            return "\(userMessage) (error id \(id))"
        }
    }

    /// The reply's text when the relay's store failed; the error (which may name the database
    /// file) goes only to the log, or to the operator.
    package func storeFailureMessage(_ error: any Error, event: Event) -> String {
        let detail = "\(error)"
        switch audience {
        case .operator:
            return "The relay could not read or write its database (\(detail)). Try again; if it keeps failing, check the store (store.path)."
        case .chat:
            let id = Self.mintID()
            log(LoggedFailure(id: id, kind: "store", detail: detail, call: "store", event: event))
            return "The relay could not read or write its saved data (error id \(id)). Try again in a minute; if it keeps failing, give the id to an admin."
        }
    }

    /// Crockford's base 32 (no I, L, O, U: nothing to misread when it is typed or read aloud).
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// Six random characters as `XXXX-XX`: 30 bits, enough to tell one failure from another in
    /// a day's log, short enough to read out.
    static func mintID() -> String {
        var generator = SystemRandomNumberGenerator()
        let characters = (0..<6).map { _ in alphabet[Int(generator.next(upperBound: UInt32(alphabet.count)))] }
        return String(characters[0..<4]) + "-" + String(characters[4...])
    }
}

/// One failure's details, for the log line that carries its id.
public struct LoggedFailure: Sendable, Hashable {
    /// The id the user was shown.
    public var id: String
    /// A bounded label (`unreachable`, `timeout`, `store`…).
    public var kind: String
    /// Everything the user was not shown: address, reason, provider text, file path.
    public var detail: String
    /// Which call failed (`quick`, `consensus`, `store`).
    public var call: String
    /// Where it happened.
    public var platform: String
    public var team: String
    public var channel: String

    init(id: String, kind: String, detail: String, call: String, event: Event) {
        self.init(id: id, kind: kind, detail: detail, call: call, platform: event.platform, team: event.team, channel: event.channel)
    }

    init(id: String, kind: String, detail: String, call: String, platform: String, team: String, channel: String) {
        self.id = id
        self.kind = kind
        self.detail = detail
        self.call = call
        self.platform = platform
        self.team = team
        self.channel = channel
    }
}
