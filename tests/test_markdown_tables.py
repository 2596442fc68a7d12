"""The Markdown reader of the reproductions' tables: tables, headings and bold, and no HTML
injection from the file's text."""

from webapp.markdown_tables import render


def test_a_pipe_table_becomes_a_table_with_its_header_row():
    html = render("| algorithm | median |\n|---|---|\n| **srtf** | 1.5 [1, 2] |\n| fifo | 3 |\n")
    assert html.startswith('<div class="scroll"><table class="table metrics"><thead><tr><th>algorithm</th>')
    assert '<tr><th scope="row"><strong>srtf</strong></th><td>1.5 [1, 2]</td></tr>' in html
    assert '<tr><th scope="row">fifo</th><td>3</td></tr>' in html and "|" not in html


def test_headings_and_paragraphs_keep_their_text_and_code_marks():
    html = render("### Zhou Fig. 2: JCT\n\nSetting: `zhou-ps`, 40 jobs.\nPaper: best.\n")
    assert html == "<h4>Zhou Fig. 2: JCT</h4>\n<p>Setting: <code>zhou-ps</code>, 40 jobs.<br>Paper: best.</p>"


def test_html_in_the_file_shows_as_text_never_as_markup():
    html = render('| <script>alert(1)</script> | <img src=x onerror="y"> |\n|---|---|\n| **<b>x</b>** | `<i>` |\n'
                  "\n<iframe src=//evil>\n")  # fmt: skip
    assert "<script" not in html and "<img" not in html and "<iframe" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<strong>&lt;b&gt;x&lt;/b&gt;</strong>" in html
    assert "<code>&lt;i&gt;</code>" in html and "&lt;iframe src=//evil&gt;" in html
