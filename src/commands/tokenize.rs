//! `tokenize`: a text's token ids and pieces.

use crate::error::CliError;
use decoding_engine::Model;

#[derive(clap::Args, Debug)]
pub struct TokenizeArgs {
    /// The text ("-": read it from standard input)
    text: String,
    #[arg(long)]
    json: bool,
}

pub fn tokenize(model: &Model, a: TokenizeArgs) -> Result<(), CliError> {
    let text = match a.text.as_str() {
        "-" => super::prompt::stdin()?,
        t => t.to_string(),
    };
    let ids = model.tokenizer.encode(&text, true)?;
    let tk = &model.tokenizer;
    let pieces: Vec<&str> = ids.iter().map(|&i| tk.piece(i)).collect::<Result<_, _>>()?;
    if a.json {
        outln!("{}", serde_json::json!({ "ids": ids, "pieces": pieces }));
    } else {
        for (id, piece) in ids.iter().zip(pieces) {
            outln!("{id}\t{piece:?}");
        }
    }
    Ok(())
}
