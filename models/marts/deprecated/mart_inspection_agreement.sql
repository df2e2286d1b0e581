-- The old name of mart_qa_generation_inspection_agreement, kept for one release (README "Renamed marts"): a view of
-- it, published under the old name too. Its description and columns are declared beside the new model's
-- (models/marts/qa_generation/mart_qa_generation_inspection_agreement.yml).

-- every column of the renamed mart, whatever they are
select * from {{ ref('mart_qa_generation_inspection_agreement') }}  -- noqa: AM04
