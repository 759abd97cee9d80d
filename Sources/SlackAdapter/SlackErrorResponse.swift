import Hummingbird
import NIOCore
import RelayCore

/// The JSON error bodies the Slack routes answer with.
enum SlackErrorResponse {
    /// `{"error": "<message>"}` with the given status; `noRetry` adds `X-Slack-No-Retry: 1`, which
    /// stops Slack from redelivering an event that can only fail again.
    static func json(status: HTTPResponse.Status, error message: String, noRetry: Bool = false) -> Response {
        let body: JSONValue = ["error": .string(message)]
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if noRetry { headers[SlackHeaders.noRetry] = "1" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.encoded())))
    }
}
