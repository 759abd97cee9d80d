import Mustache

/// The console's Mustache templates, kept in the binary (no files to deploy beside it). Each
/// starts with `ConsoleHTML.pragma`; `{{{…}}}` shows only `TrustedHTML`.
enum ConsoleTemplates {
    /// Every page: the header with the team, the navigation and sign-out, then the page's body.
    static let layout = """
        {{% CONTENT_TYPE: SCALAR_HTML}}
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · Rhea Relay</title>
        <link rel="stylesheet" href="{{base}}console.css">
        </head>
        <body>
        <header>
        <p class="brand">Rhea Relay console</p>
        {{#signedIn}}
        <p class="who">{{team}} on {{platform}} · {{userName}}</p>
        <nav>{{#nav}}<a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a> {{/nav}}</nav>
        <form method="post" action="{{base}}signout" class="signout"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Sign out</button></form>
        {{/signedIn}}
        </header>
        <main>
        <h1>{{title}}</h1>
        {{{body}}}
        </main>
        </body>
        </html>
        """

    /// A refusal: what went wrong and what to do.
    static let refusal = """
        {{% CONTENT_TYPE: SCALAR_HTML}}
        <p class="refusal" id="refusal">{{message}}</p>
        """

    /// The page a sign-in link opens: a button that signs in (a POST), so that a link preview
    /// fetching the page does not use the link up.
    static let signIn = """
        {{% CONTENT_TYPE: SCALAR_HTML}}
        <p>Sign in as <strong>{{userName}}</strong> to the console of <strong>{{team}}</strong> on {{platform}}.</p>
        <form method="post" action="{{base}}signin">
        <input type="hidden" name="t" value="{{token}}">
        <button type="submit" id="signin">Sign in</button>
        </form>
        <p class="small">The link works once; your sign-in then lasts {{minutes}} minutes.</p>
        """

    /// The overview: activity, spend and the budget, last 30 days.
    static let overview = """
        {{% CONTENT_TYPE: SCALAR_HTML}}
        <section aria-labelledby="budget-h">
        <h2 id="budget-h">Budget, {{monthName}}</h2>
        {{{budgetGauge}}}
        <p>{{budgetText}}</p>
        </section>
        <section aria-labelledby="commands-h">
        <h2 id="commands-h">Commands per day</h2>
        <p class="small">The last 30 days (UTC), from the runs this team's retention keeps: {{runTotal}} runs.</p>
        {{{commandsChart}}}
        </section>
        <section aria-labelledby="cost-h">
        <h2 id="cost-h">Cost per day by model</h2>
        <p class="small">The last 30 days: {{costTotal}} in all{{#estimatedNote}}; {{estimatedNote}}{{/estimatedNote}}.</p>
        {{{costChart}}}
        </section>
        <section aria-labelledby="failures-h">
        <h2 id="failures-h">Failures</h2>
        {{^hasFailures}}<p>No run failed in the last 30 days.</p>{{/hasFailures}}
        {{#hasFailures}}
        <table id="failures">
        <thead><tr><th scope="col">Command</th><th scope="col">Failed</th><th scope="col">Of</th></tr></thead>
        <tbody>
        {{#failures}}<tr><td>{{command}}</td><td>{{failed}}</td><td>{{runs}}</td></tr>
        {{/failures}}
        </tbody>
        </table>
        {{/hasFailures}}
        </section>
        """

    static let all: [String: String] = ["layout": layout, "refusal": refusal, "signin": signIn, "overview": overview]

    /// The templates, parsed once (after the content type their pragma names is registered).
    static let library: MustacheLibrary = {
        _ = ConsoleHTML.registered
        var library = MustacheLibrary()
        for (name, text) in all {
            // A template that does not parse is a programming error the tests catch at once.
            try! library.register(text, named: name)
        }
        return library
    }()

    /// `template` rendered with `object`'s values.
    static func render(_ template: String, _ object: Any) -> String {
        library.render(object, withTemplate: template) ?? ""
    }
}
