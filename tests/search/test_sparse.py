"""The bilingual BM25 tokenizer: jieba for Chinese, stemming for English, mixed text."""

from apps.search import sparse


def test_chinese_is_segmented_into_words_not_one_token():
    tokens = sparse.tokenize("数据库连接池的最大连接数")
    assert "数据库" in tokens
    assert "连接池" in tokens
    assert "数据库连接池的最大连接数" not in tokens


def test_chinese_stop_words_are_dropped():
    assert "的" not in sparse.tokenize("数据库的密码")


def test_english_words_are_lowercased_and_stemmed():
    tokens = sparse.tokenize("Running the Connections")
    assert tokens == ["run", "connect"]


def test_identifiers_and_numbers_are_kept_whole():
    tokens = sparse.tokenize("upgrade to 1.29 and set max_pool")
    assert "1.29" in tokens
    assert "max_pool" in tokens


def test_mixed_text_yields_both_languages():
    tokens = sparse.tokenize("用 PostgreSQL 做存储，connections 上限 50")
    assert "postgresql" in tokens
    assert "connect" in tokens
    assert "存储" in tokens
    assert "50" in tokens


def test_punctuation_only_text_has_no_tokens_and_an_empty_vector():
    assert sparse.tokenize("，。！？ ... ---") == []
    assert sparse.document_vector("，。！？").empty
    assert sparse.query_vector("the of and").empty


def test_document_vector_saturates_repeated_terms(monkeypatch):
    monkeypatch.setattr(sparse, "EXPAND", False)
    once = sparse.document_vector("backup")
    many = sparse.document_vector("backup backup backup backup")
    assert once.indices == many.indices
    assert many.values[0] > once.values[0]
    assert many.values[0] < 4 * once.values[0]


def test_query_vector_weights_each_distinct_token_once(monkeypatch):
    monkeypatch.setattr(sparse, "EXPAND", False)
    vec = sparse.query_vector("backup backup 备份")
    assert sorted(vec.values) == [1.0, 1.0]


def test_accented_latin_letters_fold_to_their_base_letters():
    # "Alcântara" used to be cut at the "â" into "alc" + "ntara".
    assert sparse.tokenize("Alcântara, São Paulo, Straße") == ["alcantara", "sao", "paulo", "strass"]
    assert sparse.tokenize("Alcantara Sao Paulo Strasse") == sparse.tokenize("Alcântara São Paulo Straße")
    assert sparse.tokenize("café 咖啡") == ["cafe", "咖啡"]
    assert sparse.english_tokens("crème brûlée") == sparse.english_tokens("creme brulee")
