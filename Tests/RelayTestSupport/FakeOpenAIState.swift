import Foundation
import Synchronization

/// What a `FakeOpenAIServer` remembers and is told.
///
/// A `Mutex` rather than an actor: every request touches it once, and a benchmark sends
/// thousands of them, so no executor hop per request.
final class FakeOpenAIState: Sendable {
    /// Every request, for awaiting the next one at a path.
    let arrivals = RequestLog<RecordedRequest>()
    struct Values {
        var persona: FakeOpenAIPersona
        /// Chat requests answered by the current persona; indexes `.sequence`.
        var personaRequests = 0
        /// Chat completions answered since start; numbers the `id`s.
        var completions = 0
        var requests: [RecordedRequest] = []
        var stream = FakeOpenAIStream()
        /// Whether answers carry `usage` (a stream's only when asked with `stream_options`), as
        /// OpenAI's do; false: as a server that counts nothing.
        var reportsUsage = true
        /// When each streamed piece of an answer was written, oldest first.
        var piecesSent: [Date] = []
    }

    let requiredKey: String?
    let modelID: String
    private let values: Mutex<Values>

    init(persona: FakeOpenAIPersona, requiredKey: String?, modelID: String) {
        self.requiredKey = requiredKey
        self.modelID = modelID
        self.values = Mutex(Values(persona: persona))
    }

    func setPersona(_ persona: FakeOpenAIPersona) {
        values.withLock {
            $0.persona = persona
            $0.personaRequests = 0
        }
    }

    func record(_ request: RecordedRequest) {
        values.withLock { $0.requests.append(request) }
    }

    /// The persona for the next chat request, its position for `.sequence`, and a
    /// completion number.
    func nextChat() -> (persona: FakeOpenAIPersona, index: Int, number: Int) {
        values.withLock { values in
            values.personaRequests += 1
            values.completions += 1
            return (values.persona, values.personaRequests - 1, values.completions)
        }
    }

    /// How answers asked for with `"stream": true` are streamed.
    var stream: FakeOpenAIStream {
        get { values.withLock { $0.stream } }
        set { values.withLock { $0.stream = newValue } }
    }

    var reportsUsage: Bool {
        get { values.withLock { $0.reportsUsage } }
        set { values.withLock { $0.reportsUsage = newValue } }
    }

    func pieceSent() {
        values.withLock { $0.piecesSent.append(Date()) }
    }

    var piecesSent: [Date] { values.withLock { $0.piecesSent } }

    var requests: [RecordedRequest] { values.withLock { $0.requests } }
    var requestCount: Int { values.withLock { $0.requests.count } }
    var lastRequest: RecordedRequest? { values.withLock { $0.requests.last } }

    func clearRequests() {
        values.withLock { $0.requests.removeAll() }
    }
}
